-- analytics_bucket() without STRICT, so that PostgreSQL inlines it. The planner inlines a SQL
-- function into the query that calls it only when the function is not STRICT, or its body is
-- provably strict, which a CASE is not. Called, it ran through the SQL-function executor once per
-- value: twice per generation in the recorder's batch statement (latency and throughput) and per
-- raw row of POST /analytics/query. Inlined, it is the CASE expression itself.
-- The answer is unchanged, NULL included: for a NULL v, `v <= 0` is NULL, so the ELSE branch
-- answers ln(NULL), which is NULL, as STRICT did.
CREATE OR REPLACE FUNCTION analytics_bucket(v double precision) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN v <= 0 THEN -1000000 ELSE ceil(ln(v) / ln(1.01::float8 / 0.99::float8))::integer END $$;
