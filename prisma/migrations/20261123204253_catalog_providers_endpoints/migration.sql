-- The catalog models providers and their offers of each model (price, limits, parameters):
-- GET /providers and GET /models/{author}/{slug}/endpoints read them; models.import writes them.

-- CreateTable
CREATE TABLE "providers" (
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "privacy_policy_url" TEXT,
    "terms_of_service_url" TEXT,
    "status_page_url" TEXT,
    "headquarters" TEXT,
    "datacenters" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "providers_pkey" PRIMARY KEY ("slug")
);

-- CreateTable
CREATE TABLE "model_endpoints" (
    "id" UUID NOT NULL,
    "model_id" TEXT NOT NULL,
    "provider_slug" TEXT NOT NULL,
    "tag" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "context_length" INTEGER NOT NULL,
    "max_completion_tokens" INTEGER,
    "max_prompt_tokens" INTEGER,
    "pricing" JSONB NOT NULL,
    "quantization" TEXT,
    "supported_parameters" TEXT[],
    "supports_implicit_caching" BOOLEAN NOT NULL DEFAULT false,
    "supports_tool_choice" JSONB NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 0,
    "position" INTEGER NOT NULL,

    CONSTRAINT "model_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "model_endpoints_provider_slug_idx" ON "model_endpoints"("provider_slug");

-- CreateIndex
CREATE UNIQUE INDEX "model_endpoints_model_id_tag_key" ON "model_endpoints"("model_id", "tag");

-- AddForeignKey
ALTER TABLE "model_endpoints" ADD CONSTRAINT "model_endpoints_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_endpoints" ADD CONSTRAINT "model_endpoints_provider_slug_fkey" FOREIGN KEY ("provider_slug") REFERENCES "providers"("slug") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Both are part of the catalog every replica holds in memory: announce their writes as models' are
-- (20261123194900_cache_notifications).
CREATE TRIGGER providers_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "providers"
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_notify_catalog();
CREATE TRIGGER model_endpoints_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "model_endpoints"
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_notify_catalog();
