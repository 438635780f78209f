-- The reservation statement reads each check with a few small statements of its own, in a loop,
-- instead of one statement over every kind of check (docs/decisions/0051-reservations-per-check-and-together.md).
-- The one statement's plan held a subplan for every branch of every kind of check, and each call
-- paid for the whole plan, whichever checks it had. Now a call runs only the statements of the
-- checks it has, each with a small plan of its own, kept per connection. What each check reads, and the figure it answers, are as
-- migration "reservation_running_totals" has them.

-- What the keys `p_ids` spent in the window from `p_since` (null: lifetime) and hold now, less what
-- their reservations past their time hold until the sweep deletes them (`p_expired`: any such in the
-- organization; `p_holds` false: spend only).
CREATE FUNCTION routing_keys_used(p_org text, p_ids uuid[], p_since date, p_byok boolean, p_holds boolean, p_expired boolean, p_now timestamptz)
RETURNS numeric LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_spent numeric;
  v_held numeric := 0;
BEGIN
  IF cardinality(p_ids) = 0 THEN
    RETURN 0;
  END IF;
  IF p_since IS NULL THEN
    SELECT sum(k.usage + CASE WHEN p_byok THEN k.byok_usage ELSE 0 END) INTO v_spent FROM api_keys k WHERE k.id = ANY(p_ids);
  ELSE
    SELECT sum(d.usage + CASE WHEN p_byok THEN d.byok_usage ELSE 0 END) INTO v_spent FROM key_usage_daily d
     WHERE d.api_key_id = ANY(p_ids) AND d.day >= p_since;
  END IF;
  IF p_holds THEN
    SELECT coalesce(sum(h.amount), 0) INTO v_held FROM spend_holds h
     WHERE h.organization_id = p_org AND h.scope = 'key' AND h.scope_id = ANY(p_ids::text[]);
    IF p_expired THEN
      v_held := v_held - coalesce((SELECT sum(r.amount) FROM spend_reservations r
                                    WHERE r.organization_id = p_org AND r.expires_at <= p_now AND r.api_key_id = ANY(p_ids)), 0);
    END IF;
  END IF;
  RETURN coalesce(v_spent, 0) + v_held;
END $$;

-- The keys `p_roots` and every key minted from them (routing_lineage), without the recursive
-- query when none was minted from them, as for most keys.
CREATE FUNCTION routing_lineage_of(p_roots uuid[]) RETURNS uuid[] LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM api_keys k WHERE k.minted_by_key_id = ANY(p_roots)) THEN
    RETURN ARRAY(SELECT l.id FROM routing_lineage(p_roots) l);
  END IF;
  RETURN p_roots;
END $$;

-- routing_spend(org, checks, now): for each check, in order, what its limit has left (as in
-- migration "reservation_running_totals", whose comment says what each scope counts).
CREATE OR REPLACE FUNCTION routing_spend(p_org text, p_checks jsonb, p_now timestamptz)
RETURNS TABLE (name text, remaining numeric) LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_holds boolean := p_now <> 'infinity'::timestamptz;
  v_expired boolean := false;
  c record;
  m record;
  v_own uuid[];
  v_elsewhere uuid[];
  v_used numeric;
BEGIN
  IF v_holds THEN
    -- Reservations past their time that the sweep has not deleted yet: still in the holds, held by
    -- nothing. There are seldom any, so each check looks for its own only when there are.
    v_expired := EXISTS (SELECT 1 FROM spend_reservations r WHERE r.organization_id = p_org AND r.expires_at <= p_now);
  END IF;
  FOR c IN SELECT x.ch->>'name' AS name, x.ch->>'scope' AS scope, (x.ch->>'since')::date AS since,
                  coalesce((x.ch->>'byok')::boolean, false) AS byok, (x.ch->>'limit')::numeric AS lim,
                  (x.ch->>'workspace_id')::uuid AS ws, (x.ch->>'guardrail_id')::uuid AS gid,
                  coalesce((x.ch->>'is_default')::boolean, false) AS dflt, x.ch->'keys' AS keys
             FROM jsonb_array_elements(p_checks) WITH ORDINALITY AS x(ch, ord) ORDER BY x.ord LOOP
    name := c.name;
    IF c.scope = 'credits' THEN
      SELECT o.credit_balance - CASE WHEN v_holds THEN coalesce(h.amount, 0) ELSE 0 END INTO remaining
        FROM organizations o
        LEFT JOIN spend_holds h ON h.organization_id = o.id AND h.scope = 'organization' AND h.scope_id = o.id
       WHERE o.id = p_org;
      IF v_expired THEN
        remaining := remaining + coalesce((SELECT sum(r.amount) FROM spend_reservations r WHERE r.organization_id = p_org AND r.expires_at <= p_now), 0);
      END IF;
    ELSIF c.scope = 'keys' THEN
      remaining := c.lim - routing_keys_used(p_org, routing_lineage_of(ARRAY(SELECT jsonb_array_elements_text(c.keys)::uuid)),
                                             c.since, c.byok, v_holds, v_expired, p_now);
    ELSIF c.scope = 'makers' THEN
      -- Each limited maker's limit in its own window, over the maker's lineage; the least of them.
      remaining := NULL;
      FOR m IN SELECT mk.id, mk.lim, mk.byok,
                      CASE WHEN mk.reset IS NULL THEN NULL
                           ELSE date_trunc(CASE mk.reset WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, p_now AT TIME ZONE 'UTC')::date END AS since
                 FROM routing_makers((c.keys->>0)::uuid) mk WHERE mk.lim IS NOT NULL LOOP
        v_used := m.lim - routing_keys_used(p_org, routing_lineage_of(ARRAY[m.id]), m.since, m.byok, v_holds, v_expired, p_now);
        IF remaining IS NULL OR v_used < remaining THEN
          remaining := v_used;
        END IF;
      END LOOP;
    ELSE
      -- workspace, or a guardrail: the keys it covers through its own assignments (direct, or
      -- through their member); the workspace's default guardrail covers its workspace less the
      -- keys assigned elsewhere in it.
      remaining := c.lim;
      IF c.scope = 'workspace' OR c.dflt THEN
        IF c.since IS NULL THEN
          SELECT c.lim - coalesce(w.usage + CASE WHEN c.byok THEN w.byok_usage ELSE 0 END, 0) INTO remaining
            FROM (SELECT 1) one LEFT JOIN workspace_spend w ON w.workspace_id = c.ws;
        ELSE
          remaining := c.lim - coalesce((SELECT sum(w.usage + CASE WHEN c.byok THEN w.byok_usage ELSE 0 END) FROM workspace_spend_daily w
                                          WHERE w.workspace_id = c.ws AND w.day >= c.since), 0);
        END IF;
        IF v_holds THEN
          remaining := remaining - coalesce((SELECT h.amount FROM spend_holds h
                                              WHERE h.organization_id = p_org AND h.scope = 'workspace' AND h.scope_id = c.ws::text), 0);
          IF v_expired THEN
            remaining := remaining + coalesce((SELECT sum(r.amount) FROM spend_reservations r
                                                WHERE r.organization_id = p_org AND r.expires_at <= p_now AND r.workspace_id = c.ws), 0);
          END IF;
        END IF;
      END IF;
      IF c.scope = 'guardrail' THEN
        v_own := ARRAY(SELECT a.api_key_id FROM guardrail_key_assignments a JOIN api_keys k ON k.id = a.api_key_id
                        WHERE a.guardrail_id = c.gid AND k.workspace_id = c.ws
                       UNION
                       SELECT k.id FROM guardrail_member_assignments ma JOIN api_keys k ON k.creator_user_id = ma.user_id AND k.workspace_id = c.ws
                        WHERE ma.guardrail_id = c.gid);
        IF c.dflt THEN
          v_elsewhere := ARRAY(SELECT a.api_key_id FROM guardrails g JOIN guardrail_key_assignments a ON a.guardrail_id = g.id
                                 JOIN api_keys k ON k.id = a.api_key_id
                                WHERE g.workspace_id = c.ws AND k.workspace_id = c.ws
                               UNION
                               SELECT k.id FROM guardrails g JOIN guardrail_member_assignments ma ON ma.guardrail_id = g.id
                                 JOIN api_keys k ON k.creator_user_id = ma.user_id AND k.workspace_id = c.ws
                                WHERE g.workspace_id = c.ws
                               EXCEPT
                               SELECT unnest(v_own));
          remaining := remaining + routing_keys_used(p_org, v_elsewhere, c.since, c.byok, v_holds, v_expired, p_now);
        ELSE
          remaining := remaining - routing_keys_used(p_org, v_own, c.since, c.byok, v_holds, v_expired, p_now);
        END IF;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;

-- routing_hold(...): routing_reserve's decision, for a caller that holds the organization's
-- reservation lock already: reads every check in a snapshot taken now, and holds the most it can up
-- to `wanted` when every check has at least `min` left (as migration "reservation_running_totals"
-- says), reading the checks as they come from routing_spend, with no arrays aggregated in between.
CREATE FUNCTION routing_hold(p_id uuid, p_org text, p_workspace uuid, p_key uuid, p_min numeric, p_wanted numeric,
                             p_checks jsonb, p_now timestamptz, p_expires timestamptz)
RETURNS TABLE (reserved boolean, granted numeric, name text, remaining numeric) LANGUAGE plpgsql AS $$
DECLARE
  v_names text[] := '{}';
  v_remaining numeric[] := '{}';
  v_grant numeric := p_wanted;
  s record;
BEGIN
  FOR s IN SELECT * FROM routing_spend(p_org, p_checks, p_now) LOOP
    v_names := v_names || s.name;
    v_remaining := v_remaining || s.remaining;
    IF s.remaining < v_grant THEN
      v_grant := s.remaining;
    END IF;
  END LOOP;
  IF v_grant < p_min OR v_grant <= 0 THEN
    v_grant := 0;
  ELSE
    INSERT INTO spend_reservations (id, organization_id, workspace_id, api_key_id, amount, created_at, expires_at)
    VALUES (p_id, p_org, p_workspace, p_key, v_grant, p_now, p_expires);
  END IF;
  reserved := v_grant > 0;
  granted := v_grant;
  FOR i IN 1 .. cardinality(v_names) LOOP
    name := v_names[i];
    remaining := v_remaining[i] - v_grant;
    RETURN NEXT;
  END LOOP;
END $$;

-- routing_reserve(...): one reservation under the organization's reservation lock (so that the
-- reservations of one organization are decided one after another, on every replica). The
-- snapshot routing_hold reads in is taken after the lock: it sees every reservation committed
-- before it.
CREATE OR REPLACE FUNCTION routing_reserve(p_id uuid, p_org text, p_workspace uuid, p_key uuid, p_min numeric, p_wanted numeric,
                                           p_checks jsonb, p_now timestamptz, p_expires timestamptz)
RETURNS TABLE (reserved boolean, granted numeric, name text, remaining numeric) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('switchyard_spend:' || p_org, 0));
  RETURN QUERY SELECT * FROM routing_hold(p_id, p_org, p_workspace, p_key, p_min, p_wanted, p_checks, p_now, p_expires);
END $$;

-- CREATE OR REPLACE keeps a function's settings only when it repeats them: these are the hot
-- path's statements, planned once per connection and never compiled (migrations
-- "routing_generic_plans" and "routing_without_jit").
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET jit = off;
ALTER FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, numeric, jsonb, timestamptz, timestamptz) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, numeric, jsonb, timestamptz, timestamptz) SET jit = off;
