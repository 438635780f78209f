-- AlterTable: the API's rate limits per organization (issue 37); null: the server's defaults.
ALTER TABLE "organization_settings" ADD COLUMN     "api_requests_per_minute" INTEGER,
ADD COLUMN     "api_requests_per_minute_per_key" INTEGER;
