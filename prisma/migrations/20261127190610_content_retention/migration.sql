-- AlterTable
ALTER TABLE "organization_settings" ADD COLUMN     "content_retention_days" INTEGER;
