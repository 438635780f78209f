-- BYOK credentials usable in every workspace of their organization: workspace_id null (admin-api.md).
-- Routing and GET /byok read them beside each workspace's own.
-- AlterTable
ALTER TABLE "byok_credentials" ALTER COLUMN "workspace_id" DROP NOT NULL;
