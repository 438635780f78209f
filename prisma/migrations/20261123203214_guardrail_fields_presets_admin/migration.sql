-- Administration over REST (issue 19): the guardrail fields of admin-api.md, one guardrail per key,
-- organization-wide assignment listings, and the preset fields of GET /presets.

-- DropIndex
DROP INDEX "guardrail_key_assignments_api_key_id_idx";

-- DropIndex
DROP INDEX "guardrail_key_assignments_guardrail_id_api_key_id_key";

-- AlterTable
ALTER TABLE "guardrails" ADD COLUMN     "allowed_data_regions" JSONB,
ADD COLUMN     "content_filter_builtins" JSONB,
ADD COLUMN     "content_filters" JSONB,
ADD COLUMN     "enable_free_model_publication" BOOLEAN,
ADD COLUMN     "enable_free_model_training" BOOLEAN,
ADD COLUMN     "enable_paid_model_training" BOOLEAN,
ADD COLUMN     "enforce_zdr_anthropic" BOOLEAN,
ADD COLUMN     "enforce_zdr_google" BOOLEAN,
ADD COLUMN     "enforce_zdr_openai" BOOLEAN,
ADD COLUMN     "enforce_zdr_other" BOOLEAN,
ADD COLUMN     "enforce_zdr_xai" BOOLEAN;

-- AlterTable
ALTER TABLE "presets" ADD COLUMN     "creator_user_id" TEXT,
ADD COLUMN     "description" TEXT,
ADD COLUMN     "designated_version_id" UUID,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'active',
ADD COLUMN     "status_updated_at" TIMESTAMPTZ(3);

-- The version in force of existing presets is their newest undeleted one; the creator is that of version 1.
UPDATE "presets" AS p
SET "designated_version_id" = (SELECT v."id" FROM "preset_versions" v WHERE v."preset_id" = p."id" AND v."deleted_at" IS NULL ORDER BY v."version" DESC LIMIT 1),
    "creator_user_id" = (SELECT v."creator_id" FROM "preset_versions" v WHERE v."preset_id" = p."id" ORDER BY v."version" LIMIT 1);

-- CreateIndex
CREATE INDEX "guardrail_key_assignments_organization_id_created_at_id_idx" ON "guardrail_key_assignments"("organization_id", "created_at", "id");

-- A key holds at most one guardrail: keep each key's newest assignment.
DELETE FROM "guardrail_key_assignments" AS a
USING "guardrail_key_assignments" AS b
WHERE a."api_key_id" = b."api_key_id" AND (a."created_at", a."id") < (b."created_at", b."id");

-- CreateIndex
CREATE UNIQUE INDEX "guardrail_key_assignments_api_key_id_key" ON "guardrail_key_assignments"("api_key_id");

-- CreateIndex
CREATE INDEX "guardrail_member_assignments_organization_id_created_at_id_idx" ON "guardrail_member_assignments"("organization_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "presets_organization_id_updated_at_id_idx" ON "presets"("organization_id", "updated_at" DESC, "id");
