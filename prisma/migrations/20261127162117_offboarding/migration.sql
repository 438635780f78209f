-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "progress" JSONB;

-- CreateTable
CREATE TABLE "organization_tombstones" (
    "organization_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL,
    "total_credits" DECIMAL(40,12) NOT NULL,
    "total_usage" DECIMAL(40,12) NOT NULL,
    "credit_balance" DECIMAL(40,12) NOT NULL,
    "deleted_by" TEXT NOT NULL,

    CONSTRAINT "organization_tombstones_pkey" PRIMARY KEY ("organization_id")
);
