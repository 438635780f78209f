-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "external_api_key_hash" TEXT,
ADD COLUMN     "external_user" TEXT;

-- AlterTable
ALTER TABLE "byok_credentials" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ALTER COLUMN "name" DROP NOT NULL,
ALTER COLUMN "secret_ciphertext" DROP NOT NULL;

-- AlterTable
ALTER TABLE "workspaces" ADD COLUMN     "created_by" TEXT,
ADD COLUMN     "default_image_model" TEXT,
ADD COLUMN     "default_provider_sort" TEXT,
ADD COLUMN     "default_text_model" TEXT,
ADD COLUMN     "deleted_at" TIMESTAMPTZ(3),
ADD COLUMN     "disabled_server_tools" JSONB,
ADD COLUMN     "io_logging_api_key_ids" JSONB,
ADD COLUMN     "io_logging_sampling_rate" DOUBLE PRECISION NOT NULL DEFAULT 1,
ADD COLUMN     "is_data_discount_logging_enabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "is_observability_broadcast_enabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "is_observability_io_logging_enabled" BOOLEAN NOT NULL DEFAULT false;
