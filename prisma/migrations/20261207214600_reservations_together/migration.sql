-- Reservations of one organization that wait together in a server process go in one statement
-- (docs/decisions/0051-reservations-per-check-and-together.md, modules/routing/reservation-queue.ts).

-- routing_reserve_many(org, requests): several reservations of one organization under one taking of
-- its lock, and one commit: decided in their order, each in a snapshot that sees the ones before it
-- (each query of this function takes a new one), so the answers are those of routing_reserve made
-- one after another. A request is { id, workspace_id, key_id, min, wanted, checks, now, expires_at };
-- each answer row names its request by position (from 1).
CREATE FUNCTION routing_reserve_many(p_org text, p_requests jsonb)
RETURNS TABLE (request integer, reserved boolean, granted numeric, name text, remaining numeric) LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('switchyard_spend:' || p_org, 0));
  FOR r IN SELECT x.ord::integer AS ord, x.q FROM jsonb_array_elements(p_requests) WITH ORDINALITY AS x(q, ord) ORDER BY x.ord LOOP
    RETURN QUERY SELECT r.ord, h.* FROM routing_hold((r.q->>'id')::uuid, p_org, (r.q->>'workspace_id')::uuid, (r.q->>'key_id')::uuid,
                                                     (r.q->>'min')::numeric, (r.q->>'wanted')::numeric, r.q->'checks',
                                                     (r.q->>'now')::timestamptz, (r.q->>'expires_at')::timestamptz) h;
  END LOOP;
END $$;

-- The hot path's settings, as for routing_reserve (migration "reservation_statement_per_check").
ALTER FUNCTION routing_reserve_many(text, jsonb) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION routing_reserve_many(text, jsonb) SET jit = off;
