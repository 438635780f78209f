-- routing_spend's one statement is many small subplans, so its estimated cost passes jit_above_cost.
-- On a server built with LLVM (Debian's PostgreSQL is; the embedded one is not), each call compiled
-- it, which took far longer than running it: every reservation and every spend read of the routing
-- path paid for a compilation. These two are the hot path's statements: never compiled.
-- (CREATE OR REPLACE of either function keeps these settings only when it repeats them.)
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET jit = off;
ALTER FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, numeric, jsonb, timestamptz, timestamptz) SET jit = off;
