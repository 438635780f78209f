-- CreateTable
CREATE TABLE "analytics_hourly" (
    "organization_id" TEXT NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
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

    CONSTRAINT "analytics_hourly_pkey" PRIMARY KEY ("organization_id","hour","workspace_id","api_key_id","user_id","model","provider","origin","finish_reason","app")
);

-- AddForeignKey
ALTER TABLE "analytics_hourly" ADD CONSTRAINT "analytics_hourly_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Log-bucketed histograms (apps/api/src/modules/analytics/sketch.ts): the bucket of a value v > 0
-- is ceil(log_gamma(v)) with gamma = (1 + a) / (1 - a), a = 0.01, so every value of bucket i lies in
-- (gamma^(i-1), gamma^i] and 2 gamma^i / (gamma + 1) is within 1% of each. 0 has its own bucket.
CREATE FUNCTION analytics_bucket(v double precision) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT CASE WHEN v <= 0 THEN -1000000 ELSE ceil(ln(v) / ln(1.01::float8 / 0.99::float8))::integer END $$;

-- Adds two histograms ({ "<bucket>": count }) bucket by bucket: the upsert of a rollup row merges with it.
CREATE FUNCTION analytics_hist_add(a jsonb, b jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
    FROM (
      SELECT k, sum(v::bigint) AS n
      FROM (SELECT key, value FROM jsonb_each_text(coalesce(a, '{}'::jsonb))
            UNION ALL SELECT key, value FROM jsonb_each_text(coalesce(b, '{}'::jsonb))) AS t(k, v)
      GROUP BY k
    ) AS s
  $$;

-- Backfill: the generations recorded before this migration, rolled up as the recorder does.
WITH facts AS (
  SELECT organization_id, date_trunc('hour', created_at, 'UTC') AS hour, workspace_id, api_key_id, user_id, model,
         coalesce(provider_name, '') AS provider, coalesce(origin, '') AS origin,
         coalesce(finish_reason, '') AS finish_reason, coalesce(app_id::text, '') AS app,
         tokens_prompt, tokens_completion, coalesce(native_tokens_reasoning, 0) AS reasoning,
         coalesce(native_tokens_cached, 0) AS cached, usage,
         CASE WHEN is_byok THEN coalesce(upstream_inference_cost, 0) ELSE 0 END AS byok, latency,
         CASE WHEN generation_time > 0 THEN tokens_completion * 1000.0::float8 / generation_time END AS throughput
  FROM generations
), hists AS (
  SELECT organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
         jsonb_object_agg(b, n) FILTER (WHERE kind = 'l') AS lh, jsonb_object_agg(b, n) FILTER (WHERE kind = 't') AS th
  FROM (
    SELECT organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
           'l' AS kind, analytics_bucket(latency) AS b, count(*) AS n
    FROM facts WHERE latency IS NOT NULL
    GROUP BY organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app, b
    UNION ALL
    SELECT organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
           't', analytics_bucket(throughput), count(*)
    FROM facts WHERE throughput IS NOT NULL
    GROUP BY organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app, analytics_bucket(throughput)
  ) AS s
  GROUP BY organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app
)
INSERT INTO analytics_hourly (organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
  request_count, tokens_prompt, tokens_completion, reasoning_tokens, cached_tokens, cache_hits, usage, byok_usage,
  latency_sum, latency_count, throughput_sum, throughput_count, latency_hist, throughput_hist)
SELECT a.*, coalesce(h.lh, '{}'::jsonb), coalesce(h.th, '{}'::jsonb)
FROM (
  SELECT organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app,
         count(*), sum(tokens_prompt), sum(tokens_completion), sum(reasoning), sum(cached), count(*) FILTER (WHERE cached > 0),
         sum(usage), sum(byok), coalesce(sum(latency), 0), count(latency), coalesce(sum(throughput), 0), count(throughput)
  FROM facts
  GROUP BY organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app
) AS a
LEFT JOIN hists h USING (organization_id, hour, workspace_id, api_key_id, user_id, model, provider, origin, finish_reason, app);
