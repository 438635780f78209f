-- CreateTable
CREATE TABLE "analytics_daily" (
    "organization_id" TEXT NOT NULL,
    "day" TIMESTAMPTZ(3) NOT NULL,
    "workspace_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "finish_reason" TEXT NOT NULL,
    "app" TEXT NOT NULL,
    "request_count" BIGINT NOT NULL DEFAULT 0,
    "tokens_prompt" BIGINT NOT NULL DEFAULT 0,
    "tokens_completion" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "cached_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_hits" BIGINT NOT NULL DEFAULT 0,
    "usage" DECIMAL(40,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(40,12) NOT NULL DEFAULT 0,
    "latency_sum" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "latency_count" BIGINT NOT NULL DEFAULT 0,
    "throughput_sum" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "throughput_count" BIGINT NOT NULL DEFAULT 0,
    "latency_hist" JSONB NOT NULL DEFAULT '{}',
    "throughput_hist" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "analytics_daily_pkey" PRIMARY KEY ("organization_id","day","workspace_id","api_key_id","user_id","model","provider","origin","finish_reason","app")
);

-- AddForeignKey
ALTER TABLE "analytics_daily" ADD CONSTRAINT "analytics_daily_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Sums histograms ({ "<bucket>": count }) bucket by bucket, as an aggregate: the rows of one
-- recording batch that fall on one UTC day merge into one analytics_daily row.
CREATE AGGREGATE analytics_hist_sum(jsonb) (SFUNC = analytics_hist_add, STYPE = jsonb, INITCOND = '{}');

-- Backfill: the hourly rollup summed by UTC day.
INSERT INTO analytics_daily (organization_id, day, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
  request_count, tokens_prompt, tokens_completion, reasoning_tokens, cached_tokens, cache_hits, usage, byok_usage,
  latency_sum, latency_count, throughput_sum, throughput_count, latency_hist, throughput_hist)
SELECT organization_id, date_trunc('day', hour, 'UTC'), workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
       sum(request_count), sum(tokens_prompt), sum(tokens_completion), sum(reasoning_tokens), sum(cached_tokens), sum(cache_hits),
       sum(usage), sum(byok_usage), sum(latency_sum), sum(latency_count), sum(throughput_sum), sum(throughput_count),
       analytics_hist_sum(latency_hist), analytics_hist_sum(throughput_hist)
FROM analytics_hourly
GROUP BY organization_id, date_trunc('day', hour, 'UTC'), workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app;
