-- CreateTable
CREATE TABLE "observability_destinations" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "config" JSONB NOT NULL,
    "secrets_ciphertext" TEXT,
    "signing_secret_ciphertext" TEXT,
    "sampling_rate" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "privacy_mode" BOOLEAN NOT NULL DEFAULT false,
    "regions" TEXT[],
    "api_key_hashes" JSONB,
    "broadcast_generation_cost" BOOLEAN NOT NULL DEFAULT false,
    "broadcast_generation_identity" BOOLEAN NOT NULL DEFAULT false,
    "broadcast_generation_request_context" BOOLEAN NOT NULL DEFAULT false,
    "filter_rules" JSONB,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "observability_destinations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "observability_destinations_workspace_id_type_created_at_idx" ON "observability_destinations"("workspace_id", "type", "created_at");

-- CreateIndex
CREATE INDEX "observability_destinations_organization_id_idx" ON "observability_destinations"("organization_id");

-- AddForeignKey
ALTER TABLE "observability_destinations" ADD CONSTRAINT "observability_destinations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "observability_destinations" ADD CONSTRAINT "observability_destinations_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
