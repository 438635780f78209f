-- routing_spend() and routing_reserve() run their statements with generic plans. Their statements
-- take a check (jsonb) as a parameter, so PL/pgSQL's plan cache kept choosing custom plans, and
-- planned each of them again on every call: most of a reservation's database CPU, and a reservation
-- runs under its organization's lock, so that CPU bounded how many reservations an organization can
-- make a second. The generic plans decide which kind of check runs with one-time filters at run
-- time (measured: a reservation of four checks went from 9.3 to 6.2 ms on one connection of a
-- busy 2-core machine; docs/decisions/0017-routing-functions-generic-plans.md). A CREATE OR
-- REPLACE of either function must repeat the SET clause.
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, jsonb, timestamptz, timestamptz) SET plan_cache_mode = force_generic_plan;
