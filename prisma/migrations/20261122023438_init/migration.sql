-- CreateEnum
CREATE TYPE "org_role" AS ENUM ('org:admin', 'org:member');

-- CreateEnum
CREATE TYPE "workspace_role" AS ENUM ('admin', 'member');

-- CreateEnum
CREATE TYPE "limit_reset" AS ENUM ('daily', 'weekly', 'monthly');

-- CreateEnum
CREATE TYPE "budget_interval" AS ENUM ('daily', 'weekly', 'monthly', 'lifetime');

-- CreateEnum
CREATE TYPE "data_region" AS ENUM ('global', 'europe', 'us');

-- CreateEnum
CREATE TYPE "feedback_category" AS ENUM ('latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other');

-- CreateEnum
CREATE TYPE "video_job_status" AS ENUM ('queued', 'in_progress', 'completed', 'failed');

-- CreateTable
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "credit_balance" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "store_content" BOOLEAN NOT NULL DEFAULT true,
    "default_workspace_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "first_name" TEXT NOT NULL DEFAULT '',
    "last_name" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "organization_members" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" "org_role" NOT NULL DEFAULT 'org:member',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "organization_members_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspaces" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "include_byok_in_budgets" BOOLEAN NOT NULL DEFAULT false,
    "storage_quota_bytes" BIGINT,
    "storage_used_bytes" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_members" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "role" "workspace_role" NOT NULL DEFAULT 'member',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_members_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "creator_user_id" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "is_management_key" BOOLEAN NOT NULL DEFAULT false,
    "is_provisioning_key" BOOLEAN NOT NULL DEFAULT false,
    "is_free_tier" BOOLEAN NOT NULL DEFAULT false,
    "limit" DECIMAL(28,12),
    "limit_reset" "limit_reset",
    "include_byok_in_limit" BOOLEAN NOT NULL DEFAULT false,
    "allowed_data_regions" "data_region"[] DEFAULT ARRAY['global']::"data_region"[],
    "free_model_daily_limit" INTEGER NOT NULL DEFAULT 50,
    "expires_at" TIMESTAMPTZ(3),
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "usage" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "key_usage_daily" (
    "api_key_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "organization_id" TEXT NOT NULL,
    "usage" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "request_count" INTEGER NOT NULL DEFAULT 0,
    "free_request_count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "key_usage_daily_pkey" PRIMARY KEY ("api_key_id","day")
);

-- CreateTable
CREATE TABLE "generations" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "request_id" TEXT,
    "upstream_id" TEXT,
    "model" TEXT NOT NULL,
    "provider_name" TEXT,
    "router" TEXT,
    "api_type" TEXT,
    "app_id" INTEGER,
    "preset_id" TEXT,
    "session_id" TEXT,
    "external_user" TEXT,
    "user_agent" TEXT,
    "http_referer" TEXT,
    "origin" TEXT,
    "data_region" TEXT,
    "service_tier" TEXT,
    "web_search_engine" TEXT,
    "finish_reason" TEXT,
    "native_finish_reason" TEXT,
    "cancelled" BOOLEAN NOT NULL DEFAULT false,
    "streamed" BOOLEAN NOT NULL DEFAULT false,
    "is_byok" BOOLEAN NOT NULL DEFAULT false,
    "is_free" BOOLEAN NOT NULL DEFAULT false,
    "latency" DOUBLE PRECISION,
    "generation_time" DOUBLE PRECISION,
    "moderation_latency" DOUBLE PRECISION,
    "tokens_prompt" INTEGER NOT NULL DEFAULT 0,
    "tokens_completion" INTEGER NOT NULL DEFAULT 0,
    "native_tokens_prompt" INTEGER,
    "native_tokens_completion" INTEGER,
    "native_tokens_completion_images" INTEGER,
    "native_tokens_reasoning" INTEGER,
    "native_tokens_cached" INTEGER,
    "num_fetches" INTEGER,
    "num_input_audio_prompt" INTEGER,
    "num_media_completion" INTEGER,
    "num_media_prompt" INTEGER,
    "num_search_results" INTEGER,
    "total_cost" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "usage" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "upstream_inference_cost" DECIMAL(28,12),
    "cache_discount" DECIMAL(28,12),
    "provider_responses" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "generations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "generation_contents" (
    "generation_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "input" JSONB NOT NULL,
    "completion" TEXT NOT NULL DEFAULT '',
    "reasoning" TEXT,
    "error" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "generation_contents_pkey" PRIMARY KEY ("generation_id")
);

-- CreateTable
CREATE TABLE "generation_feedback" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "generation_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "category" "feedback_category" NOT NULL,
    "comment" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "generation_feedback_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "models" (
    "id" TEXT NOT NULL,
    "lookup" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "canonical_slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "created" INTEGER NOT NULL,
    "context_length" INTEGER NOT NULL,
    "input_modalities" TEXT[],
    "output_modalities" TEXT[],
    "tokenizer" TEXT NOT NULL,
    "instruct_type" TEXT,
    "pricing_prompt" TEXT NOT NULL,
    "pricing_completion" TEXT NOT NULL,
    "pricing_image" TEXT NOT NULL DEFAULT '0',
    "pricing_request" TEXT NOT NULL DEFAULT '0',
    "top_context_length" INTEGER NOT NULL,
    "top_max_completion_tokens" INTEGER,
    "top_is_moderated" BOOLEAN NOT NULL DEFAULT false,
    "supported_parameters" TEXT[],
    "supported_voices" JSONB,
    "default_parameters" JSONB,
    "per_request_limits" JSONB,
    "expiration_date" TIMESTAMPTZ(3),
    "knowledge_cutoff" TEXT,
    "reasoning" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "model_variants" (
    "id" TEXT NOT NULL,
    "lookup" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,
    "variant" TEXT NOT NULL,
    "name" TEXT,
    "context_length" INTEGER,
    "pricing_prompt" TEXT,
    "pricing_completion" TEXT,
    "pricing_image" TEXT,
    "pricing_request" TEXT,

    CONSTRAINT "model_variants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "model_aliases" (
    "lookup" TEXT NOT NULL,
    "model_id" TEXT NOT NULL,

    CONSTRAINT "model_aliases_pkey" PRIMARY KEY ("lookup")
);

-- CreateTable
CREATE TABLE "budgets" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "limit_usd" DECIMAL(28,12) NOT NULL,
    "reset_interval" "budget_interval" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "budgets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "byok_credentials" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "is_fallback" BOOLEAN NOT NULL DEFAULT false,
    "sort_order" INTEGER NOT NULL DEFAULT 0,
    "declared_zdr" BOOLEAN,
    "is_byok_only" BOOLEAN NOT NULL DEFAULT false,
    "is_required" BOOLEAN NOT NULL DEFAULT false,
    "allowed_api_key_hashes" JSONB,
    "allowed_models" JSONB,
    "allowed_user_ids" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "byok_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "guardrails" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "allowed_models" JSONB,
    "ignored_models" JSONB,
    "allowed_providers" JSONB,
    "ignored_providers" JSONB,
    "enforce_zdr" BOOLEAN NOT NULL DEFAULT false,
    "limit_usd" DECIMAL(28,12) NOT NULL DEFAULT 0,
    "reset_interval" "limit_reset",
    "include_byok_in_budgets" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "guardrails_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "guardrail_key_assignments" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "guardrail_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "assigned_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "guardrail_key_assignments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "guardrail_member_assignments" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "guardrail_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "assigned_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "guardrail_member_assignments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "presets" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "presets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "preset_versions" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "preset_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "config" JSONB NOT NULL,
    "system_prompt" TEXT,
    "creator_id" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "preset_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scim_group_mappings" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "scim_group_id" UUID NOT NULL,
    "role" "workspace_role" NOT NULL DEFAULT 'member',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "scim_group_mappings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "containers" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "container_id" TEXT NOT NULL,
    "session_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "containers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "container_files" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "container_id" UUID NOT NULL,
    "path" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL DEFAULT 'application/octet-stream',
    "size_bytes" BIGINT NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "container_files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "documents" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "filename" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL,
    "size_bytes" BIGINT NOT NULL,
    "sha256" TEXT NOT NULL,
    "purpose" TEXT NOT NULL DEFAULT 'assistants',
    "storage_key" TEXT NOT NULL,
    "source_file_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "documents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "video_jobs" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "api_key_id" UUID,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "upstream_job_id" TEXT NOT NULL,
    "status" "video_job_status" NOT NULL DEFAULT 'queued',
    "prompt" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "video_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "video_outputs" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "video_job_id" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "upstream_url" TEXT NOT NULL,
    "media_type" TEXT NOT NULL DEFAULT 'video/mp4',
    "size_bytes" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "video_outputs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organizations_default_workspace_id_key" ON "organizations"("default_workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE INDEX "organization_members_user_id_idx" ON "organization_members"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "organization_members_organization_id_user_id_key" ON "organization_members"("organization_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "workspaces_organization_id_slug_key" ON "workspaces"("organization_id", "slug");

-- CreateIndex
CREATE INDEX "workspace_members_workspace_id_created_at_id_idx" ON "workspace_members"("workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "workspace_members_organization_id_user_id_idx" ON "workspace_members"("organization_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "workspace_members_workspace_id_user_id_key" ON "workspace_members"("workspace_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_organization_id_created_at_idx" ON "api_keys"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "api_keys_workspace_id_idx" ON "api_keys"("workspace_id");

-- CreateIndex
CREATE INDEX "key_usage_daily_organization_id_day_idx" ON "key_usage_daily"("organization_id", "day");

-- CreateIndex
CREATE INDEX "generations_api_key_id_created_at_idx" ON "generations"("api_key_id", "created_at");

-- CreateIndex
CREATE INDEX "generations_organization_id_created_at_idx" ON "generations"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "generation_contents_organization_id_idx" ON "generation_contents"("organization_id");

-- CreateIndex
CREATE INDEX "generation_feedback_generation_id_idx" ON "generation_feedback"("generation_id");

-- CreateIndex
CREATE INDEX "generation_feedback_organization_id_created_at_idx" ON "generation_feedback"("organization_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "models_lookup_key" ON "models"("lookup");

-- CreateIndex
CREATE INDEX "models_output_modalities_idx" ON "models" USING GIN ("output_modalities");

-- CreateIndex
CREATE UNIQUE INDEX "model_variants_lookup_key" ON "model_variants"("lookup");

-- CreateIndex
CREATE UNIQUE INDEX "model_variants_model_id_variant_key" ON "model_variants"("model_id", "variant");

-- CreateIndex
CREATE INDEX "model_aliases_model_id_idx" ON "model_aliases"("model_id");

-- CreateIndex
CREATE UNIQUE INDEX "budgets_workspace_id_reset_interval_key" ON "budgets"("workspace_id", "reset_interval");

-- CreateIndex
CREATE INDEX "byok_credentials_workspace_id_provider_sort_order_idx" ON "byok_credentials"("workspace_id", "provider", "sort_order");

-- CreateIndex
CREATE INDEX "byok_credentials_organization_id_idx" ON "byok_credentials"("organization_id");

-- CreateIndex
CREATE INDEX "guardrails_workspace_id_created_at_id_idx" ON "guardrails"("workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "guardrails_organization_id_idx" ON "guardrails"("organization_id");

-- CreateIndex
CREATE INDEX "guardrail_key_assignments_guardrail_id_created_at_id_idx" ON "guardrail_key_assignments"("guardrail_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "guardrail_key_assignments_api_key_id_idx" ON "guardrail_key_assignments"("api_key_id");

-- CreateIndex
CREATE UNIQUE INDEX "guardrail_key_assignments_guardrail_id_api_key_id_key" ON "guardrail_key_assignments"("guardrail_id", "api_key_id");

-- CreateIndex
CREATE INDEX "guardrail_member_assignments_guardrail_id_created_at_id_idx" ON "guardrail_member_assignments"("guardrail_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "guardrail_member_assignments_organization_id_user_id_idx" ON "guardrail_member_assignments"("organization_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "guardrail_member_assignments_guardrail_id_user_id_key" ON "guardrail_member_assignments"("guardrail_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "presets_organization_id_slug_key" ON "presets"("organization_id", "slug");

-- CreateIndex
CREATE INDEX "preset_versions_organization_id_idx" ON "preset_versions"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "preset_versions_preset_id_version_key" ON "preset_versions"("preset_id", "version");

-- CreateIndex
CREATE INDEX "scim_group_mappings_organization_id_idx" ON "scim_group_mappings"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "scim_group_mappings_workspace_id_scim_group_id_key" ON "scim_group_mappings"("workspace_id", "scim_group_id");

-- CreateIndex
CREATE INDEX "containers_workspace_id_idx" ON "containers"("workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "containers_organization_id_container_id_key" ON "containers"("organization_id", "container_id");

-- CreateIndex
CREATE INDEX "container_files_organization_id_idx" ON "container_files"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "container_files_container_id_path_key" ON "container_files"("container_id", "path");

-- CreateIndex
CREATE INDEX "documents_workspace_id_created_at_idx" ON "documents"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "documents_source_file_id_idx" ON "documents"("source_file_id");

-- CreateIndex
CREATE INDEX "documents_organization_id_idx" ON "documents"("organization_id");

-- CreateIndex
CREATE INDEX "video_jobs_organization_id_created_at_idx" ON "video_jobs"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "video_jobs_workspace_id_idx" ON "video_jobs"("workspace_id");

-- CreateIndex
CREATE INDEX "video_jobs_api_key_id_idx" ON "video_jobs"("api_key_id");

-- CreateIndex
CREATE INDEX "video_outputs_organization_id_idx" ON "video_outputs"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "video_outputs_video_job_id_index_key" ON "video_outputs"("video_job_id", "index");

-- AddForeignKey
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_workspace_id_fkey" FOREIGN KEY ("default_workspace_id") REFERENCES "workspaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "organization_members" ADD CONSTRAINT "organization_members_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "organization_members" ADD CONSTRAINT "organization_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "organization_members"("organization_id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_creator_user_id_fkey" FOREIGN KEY ("creator_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "key_usage_daily" ADD CONSTRAINT "key_usage_daily_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "key_usage_daily" ADD CONSTRAINT "key_usage_daily_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generations" ADD CONSTRAINT "generations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generations" ADD CONSTRAINT "generations_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generations" ADD CONSTRAINT "generations_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generation_contents" ADD CONSTRAINT "generation_contents_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generation_contents" ADD CONSTRAINT "generation_contents_generation_id_fkey" FOREIGN KEY ("generation_id") REFERENCES "generations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generation_feedback" ADD CONSTRAINT "generation_feedback_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "generation_feedback" ADD CONSTRAINT "generation_feedback_generation_id_fkey" FOREIGN KEY ("generation_id") REFERENCES "generations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_variants" ADD CONSTRAINT "model_variants_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_aliases" ADD CONSTRAINT "model_aliases_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "byok_credentials" ADD CONSTRAINT "byok_credentials_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "byok_credentials" ADD CONSTRAINT "byok_credentials_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrails" ADD CONSTRAINT "guardrails_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrails" ADD CONSTRAINT "guardrails_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_key_assignments" ADD CONSTRAINT "guardrail_key_assignments_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_key_assignments" ADD CONSTRAINT "guardrail_key_assignments_guardrail_id_fkey" FOREIGN KEY ("guardrail_id") REFERENCES "guardrails"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_key_assignments" ADD CONSTRAINT "guardrail_key_assignments_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_member_assignments" ADD CONSTRAINT "guardrail_member_assignments_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_member_assignments" ADD CONSTRAINT "guardrail_member_assignments_guardrail_id_fkey" FOREIGN KEY ("guardrail_id") REFERENCES "guardrails"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "guardrail_member_assignments" ADD CONSTRAINT "guardrail_member_assignments_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "organization_members"("organization_id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "presets" ADD CONSTRAINT "presets_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "presets" ADD CONSTRAINT "presets_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preset_versions" ADD CONSTRAINT "preset_versions_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "preset_versions" ADD CONSTRAINT "preset_versions_preset_id_fkey" FOREIGN KEY ("preset_id") REFERENCES "presets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scim_group_mappings" ADD CONSTRAINT "scim_group_mappings_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scim_group_mappings" ADD CONSTRAINT "scim_group_mappings_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "containers" ADD CONSTRAINT "containers_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "containers" ADD CONSTRAINT "containers_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "container_files" ADD CONSTRAINT "container_files_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "container_files" ADD CONSTRAINT "container_files_container_id_fkey" FOREIGN KEY ("container_id") REFERENCES "containers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "documents" ADD CONSTRAINT "documents_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "documents" ADD CONSTRAINT "documents_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_outputs" ADD CONSTRAINT "video_outputs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_outputs" ADD CONSTRAINT "video_outputs_video_job_id_fkey" FOREIGN KEY ("video_job_id") REFERENCES "video_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
