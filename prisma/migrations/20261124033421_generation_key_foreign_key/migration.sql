-- One foreign key from generations to the key together with its organization and workspace, in place
-- of one per column (the recorder checked three per inserted row), and none from generation_contents
-- to organizations (its rows go with their generation). Adding the key checks every generation
-- recorded so far; one whose organization or workspace is not its key's stops this migration,
-- which is then rolled back whole.

-- DropForeignKey
ALTER TABLE "generation_contents" DROP CONSTRAINT "generation_contents_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "generations" DROP CONSTRAINT "generations_api_key_id_fkey";

-- DropForeignKey
ALTER TABLE "generations" DROP CONSTRAINT "generations_organization_id_fkey";

-- DropForeignKey
ALTER TABLE "generations" DROP CONSTRAINT "generations_workspace_id_fkey";

-- DropIndex
DROP INDEX "generation_contents_organization_id_idx";

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_id_organization_id_workspace_id_key" ON "api_keys"("id", "organization_id", "workspace_id");

-- AddForeignKey
ALTER TABLE "generations" ADD CONSTRAINT "generations_api_key_id_organization_id_workspace_id_fkey" FOREIGN KEY ("api_key_id", "organization_id", "workspace_id") REFERENCES "api_keys"("id", "organization_id", "workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;
