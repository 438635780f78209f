-- AlterTable
ALTER TABLE "api_keys" ALTER COLUMN "usage" SET DATA TYPE DECIMAL(40,12),
ALTER COLUMN "byok_usage" SET DATA TYPE DECIMAL(40,12);

-- AlterTable
ALTER TABLE "key_usage_daily" ALTER COLUMN "usage" SET DATA TYPE DECIMAL(40,12),
ALTER COLUMN "byok_usage" SET DATA TYPE DECIMAL(40,12),
ALTER COLUMN "request_count" SET DATA TYPE BIGINT,
ALTER COLUMN "free_request_count" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "disabled_at" TIMESTAMPTZ(3),
ALTER COLUMN "credit_balance" SET DATA TYPE DECIMAL(40,12);

-- CreateTable
CREATE TABLE "platform_keys" (
    "id" UUID NOT NULL,
    "hash" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "platform_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "platform_keys_hash_key" ON "platform_keys"("hash");
