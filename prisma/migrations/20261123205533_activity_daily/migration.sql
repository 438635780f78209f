-- GET /activity reads per-day rollups of generations by key, model and provider, kept by the
-- statement that records generations (recorder.ts). Generations recorded before are rolled up here.

-- CreateTable
CREATE TABLE "activity_daily" (
    "organization_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "api_key_id" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "provider_name" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "usage" DECIMAL(40,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(40,12) NOT NULL DEFAULT 0,

    CONSTRAINT "activity_daily_pkey" PRIMARY KEY ("api_key_id","day","model","provider_name")
);

-- CreateIndex
CREATE INDEX "activity_daily_organization_id_day_idx" ON "activity_daily"("organization_id", "day");

-- AddForeignKey
ALTER TABLE "activity_daily" ADD CONSTRAINT "activity_daily_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "activity_daily" ADD CONSTRAINT "activity_daily_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill from the generations recorded so far (the recorder keeps it from now on).
INSERT INTO "activity_daily" ("organization_id", "day", "api_key_id", "model", "provider_name", "workspace_id", "user_id",
                              "requests", "prompt_tokens", "completion_tokens", "reasoning_tokens", "usage", "byok_usage")
SELECT "organization_id", ("created_at" AT TIME ZONE 'UTC')::date, "api_key_id", "model", coalesce("provider_name", ''),
       (array_agg("workspace_id"))[1], (array_agg("user_id"))[1],
       count(*), sum("tokens_prompt"), sum("tokens_completion"), sum(coalesce("native_tokens_reasoning", 0)), sum("usage"),
       sum(CASE WHEN "is_byok" THEN coalesce("upstream_inference_cost", 0) ELSE 0 END)
FROM "generations"
GROUP BY "organization_id", ("created_at" AT TIME ZONE 'UTC')::date, "api_key_id", "model", coalesce("provider_name", '');
