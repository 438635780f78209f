-- CreateTable
CREATE TABLE "spend_holds" (
    "organization_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "scope_id" TEXT NOT NULL,
    "amount" DECIMAL(40,12) NOT NULL DEFAULT 0,

    CONSTRAINT "spend_holds_pkey" PRIMARY KEY ("organization_id","scope","scope_id")
);

-- CreateTable
CREATE TABLE "workspace_spend" (
    "workspace_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "usage" DECIMAL(40,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(40,12) NOT NULL DEFAULT 0,

    CONSTRAINT "workspace_spend_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable
CREATE TABLE "workspace_spend_daily" (
    "workspace_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "organization_id" TEXT NOT NULL,
    "usage" DECIMAL(40,12) NOT NULL DEFAULT 0,
    "byok_usage" DECIMAL(40,12) NOT NULL DEFAULT 0,

    CONSTRAINT "workspace_spend_daily_pkey" PRIMARY KEY ("workspace_id","day")
);

-- CreateIndex
CREATE INDEX "api_keys_creator_user_id_workspace_id_idx" ON "api_keys"("creator_user_id", "workspace_id");

-- AddForeignKey
ALTER TABLE "spend_holds" ADD CONSTRAINT "spend_holds_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_spend" ADD CONSTRAINT "workspace_spend_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_spend" ADD CONSTRAINT "workspace_spend_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_spend_daily" ADD CONSTRAINT "workspace_spend_daily_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_spend_daily" ADD CONSTRAINT "workspace_spend_daily_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;



-- Running totals for routing_spend() (docs/decisions/0043-reservation-running-totals.md). A
-- decision used to sum, for every limit, the spend of every key the limit covers and every open
-- reservation of the organization; under the organization's reservation lock that cost grew with
-- the workspace's keys and the open reservations. Now each limit reads rows whose number does not
-- grow with history: a key's days in the window (key_usage_daily) or its lifetime total
-- (api_keys), its workspace's days (workspace_spend_daily) or lifetime total (workspace_spend), and
-- what is held per organization, workspace and key (spend_holds). Triggers keep the totals in the
-- transaction of every write that changes what they sum, whichever code makes it.

-- What open reservations hold. A reservation made adds its amount (upserted in key order, so that
-- two writers never deadlock); one deleted (settled, released, expired, or gone with its workspace
-- or organization) or given back in part takes it off. Decreases only update, locking the rows in
-- the same order first: a reservation deleted by its organization's cascade must not make a row
-- for an organization that is going.
CREATE FUNCTION spend_holds_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO spend_holds (organization_id, scope, scope_id, amount)
  SELECT d.organization_id, s.scope, s.scope_id, sum(d.amount)
    FROM new_rows d
   CROSS JOIN LATERAL (VALUES ('key', d.api_key_id::text), ('organization', d.organization_id), ('workspace', d.workspace_id::text)) AS s(scope, scope_id)
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (organization_id, scope, scope_id) DO UPDATE SET amount = spend_holds.amount + EXCLUDED.amount;
  RETURN NULL;
END $$;

CREATE FUNCTION spend_holds_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH deltas AS MATERIALIZED (
    SELECT c.organization_id, s.scope, s.scope_id, sum(c.amount) AS amount
      FROM (SELECT organization_id, api_key_id, workspace_id, -amount AS amount FROM old_rows) c
     CROSS JOIN LATERAL (VALUES ('key', c.api_key_id::text), ('organization', c.organization_id), ('workspace', c.workspace_id::text)) AS s(scope, scope_id)
     GROUP BY 1, 2, 3 HAVING sum(c.amount) <> 0
  ), locked AS MATERIALIZED (
    SELECT h.organization_id, h.scope, h.scope_id FROM spend_holds h
     WHERE (h.organization_id, h.scope, h.scope_id) IN (SELECT organization_id, scope, scope_id FROM deltas)
     ORDER BY 1, 2, 3 FOR NO KEY UPDATE
  )
  UPDATE spend_holds h SET amount = h.amount + d.amount
    FROM deltas d JOIN locked l USING (organization_id, scope, scope_id)
   WHERE h.organization_id = d.organization_id AND h.scope = d.scope AND h.scope_id = d.scope_id;
  RETURN NULL;
END $$;

-- An UPDATE of a reservation is a give-back: its amount lowered, nothing else changed.
CREATE FUNCTION spend_holds_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH deltas AS MATERIALIZED (
    SELECT c.organization_id, s.scope, s.scope_id, sum(c.amount) AS amount
      FROM (SELECT organization_id, api_key_id, workspace_id, -amount AS amount FROM old_rows UNION ALL SELECT organization_id, api_key_id, workspace_id, amount FROM new_rows) c
     CROSS JOIN LATERAL (VALUES ('key', c.api_key_id::text), ('organization', c.organization_id), ('workspace', c.workspace_id::text)) AS s(scope, scope_id)
     GROUP BY 1, 2, 3 HAVING sum(c.amount) <> 0
  ), locked AS MATERIALIZED (
    SELECT h.organization_id, h.scope, h.scope_id FROM spend_holds h
     WHERE (h.organization_id, h.scope, h.scope_id) IN (SELECT organization_id, scope, scope_id FROM deltas)
     ORDER BY 1, 2, 3 FOR NO KEY UPDATE
  )
  UPDATE spend_holds h SET amount = h.amount + d.amount
    FROM deltas d JOIN locked l USING (organization_id, scope, scope_id)
   WHERE h.organization_id = d.organization_id AND h.scope = d.scope AND h.scope_id = d.scope_id;
  RETURN NULL;
END $$;

CREATE TRIGGER spend_holds_insert AFTER INSERT ON spend_reservations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION spend_holds_insert();
CREATE TRIGGER spend_holds_delete AFTER DELETE ON spend_reservations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION spend_holds_delete();
CREATE TRIGGER spend_holds_update AFTER UPDATE ON spend_reservations
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION spend_holds_update();

INSERT INTO spend_holds (organization_id, scope, scope_id, amount)
SELECT r.organization_id, s.scope, s.scope_id, sum(r.amount)
  FROM spend_reservations r
 CROSS JOIN LATERAL (VALUES ('key', r.api_key_id::text), ('organization', r.organization_id), ('workspace', r.workspace_id::text)) AS s(scope, scope_id)
 GROUP BY 1, 2, 3;

-- A workspace's recorded spend per day: what its keys' daily rollups add (recording upserts them).
-- Rollup rows are removed only with their key's workspace or organization, whose totals go too.
CREATE FUNCTION workspace_spend_daily_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO workspace_spend_daily (workspace_id, day, organization_id, usage, byok_usage)
  SELECT k.workspace_id, d.day, d.organization_id, sum(d.usage), sum(d.byok_usage)
    FROM (SELECT api_key_id, day, organization_id, usage, byok_usage FROM new_rows) d
    JOIN api_keys k ON k.id = d.api_key_id
   GROUP BY 1, 2, 3 HAVING sum(d.usage) <> 0 OR sum(d.byok_usage) <> 0 ORDER BY 1, 2
  ON CONFLICT (workspace_id, day) DO UPDATE SET
    usage = workspace_spend_daily.usage + EXCLUDED.usage,
    byok_usage = workspace_spend_daily.byok_usage + EXCLUDED.byok_usage;
  RETURN NULL;
END $$;

CREATE FUNCTION workspace_spend_daily_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO workspace_spend_daily (workspace_id, day, organization_id, usage, byok_usage)
  SELECT k.workspace_id, d.day, d.organization_id, sum(d.usage), sum(d.byok_usage)
    FROM (SELECT api_key_id, day, organization_id, usage, byok_usage FROM new_rows UNION ALL SELECT api_key_id, day, organization_id, -usage, -byok_usage FROM old_rows) d
    JOIN api_keys k ON k.id = d.api_key_id
   GROUP BY 1, 2, 3 HAVING sum(d.usage) <> 0 OR sum(d.byok_usage) <> 0 ORDER BY 1, 2
  ON CONFLICT (workspace_id, day) DO UPDATE SET
    usage = workspace_spend_daily.usage + EXCLUDED.usage,
    byok_usage = workspace_spend_daily.byok_usage + EXCLUDED.byok_usage;
  RETURN NULL;
END $$;

CREATE TRIGGER workspace_spend_daily_insert AFTER INSERT ON key_usage_daily
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION workspace_spend_daily_insert();
CREATE TRIGGER workspace_spend_daily_update AFTER UPDATE ON key_usage_daily
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION workspace_spend_daily_update();

INSERT INTO workspace_spend_daily (workspace_id, day, organization_id, usage, byok_usage)
SELECT k.workspace_id, d.day, d.organization_id, sum(d.usage), sum(d.byok_usage)
  FROM key_usage_daily d JOIN api_keys k ON k.id = d.api_key_id
 GROUP BY 1, 2, 3;

-- A workspace's lifetime spend: the sum of its keys' lifetime totals (api_keys.usage and
-- byok_usage, which recording adds to).
CREATE FUNCTION workspace_spend_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO workspace_spend (workspace_id, organization_id, usage, byok_usage)
  VALUES (NEW.workspace_id, NEW.organization_id,
          NEW.usage - CASE WHEN TG_OP = 'UPDATE' THEN OLD.usage ELSE 0 END,
          NEW.byok_usage - CASE WHEN TG_OP = 'UPDATE' THEN OLD.byok_usage ELSE 0 END)
  ON CONFLICT (workspace_id) DO UPDATE SET
    usage = workspace_spend.usage + EXCLUDED.usage,
    byok_usage = workspace_spend.byok_usage + EXCLUDED.byok_usage;
  RETURN NULL;
END $$;

CREATE TRIGGER workspace_spend_update AFTER UPDATE OF usage, byok_usage ON api_keys
  FOR EACH ROW WHEN (OLD.usage IS DISTINCT FROM NEW.usage OR OLD.byok_usage IS DISTINCT FROM NEW.byok_usage)
  EXECUTE FUNCTION workspace_spend_add();
CREATE TRIGGER workspace_spend_insert AFTER INSERT ON api_keys
  FOR EACH ROW WHEN (NEW.usage <> 0 OR NEW.byok_usage <> 0)
  EXECUTE FUNCTION workspace_spend_add();

INSERT INTO workspace_spend (workspace_id, organization_id, usage, byok_usage)
SELECT workspace_id, organization_id, sum(usage), sum(byok_usage) FROM api_keys GROUP BY 1, 2;

-- routing_spend(org, checks, now): for each check (as in migration "routing_decisions"), the
-- limit's remaining amount: its `limit` less the spend recorded in its window and the spend held by
-- reservations open at `now` (`now` = infinity: none), all read in one snapshot.
--   keys       the keys and every key minted from them, at any depth (routing_lineage, migration
--              "minted_keys"): their days in the window, or their lifetime totals; their holds
--   makers     (one key) the least that any maker above it with a limit has left (routing_makers):
--              each maker's limit in its own window over the maker's own lineage, as "keys"; null
--              when no maker above it has a limit
--   workspace  the workspace's days, or its lifetime total; its hold
--   guardrail  the keys it covers through its assignments (direct, or through their member) as
--              "keys"; for the workspace's default guardrail, which also covers every key of the
--              workspace with no assignment there, the workspace less the keys assigned elsewhere
--   credits    the balance less the organization's hold
-- A hold counts every reservation made and not yet deleted; those past their time, until the
-- sweep deletes them, are taken off it here (the (organization_id, expires_at) index finds them).
-- So a check reads a bounded number of rows: nothing that grows with generations, reservations,
-- keys or days, except a guardrail's assigned keys and a key's minted lineage (bounded in depth,
-- found through api_keys_minted_by_key_id_idx).
DROP FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, jsonb, timestamptz, timestamptz);
DROP FUNCTION routing_spend(text, jsonb, timestamptz);
DROP FUNCTION routing_covered_keys(jsonb);

CREATE FUNCTION routing_spend(p_org text, p_checks jsonb, p_now timestamptz)
RETURNS TABLE (name text, remaining numeric) LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_holds boolean := p_now <> 'infinity'::timestamptz;
BEGIN
  -- One statement (one plan, kept): each check's keys, then what they spent and hold.
  RETURN QUERY
  WITH c AS (
    SELECT x.ord, x.ch->>'name' AS name, x.ch->>'scope' AS scope, (x.ch->>'since')::date AS since,
           coalesce((x.ch->>'byok')::boolean, false) AS byok, (x.ch->>'limit')::numeric AS lim,
           (x.ch->>'workspace_id')::uuid AS ws, (x.ch->>'guardrail_id')::uuid AS gid,
           coalesce((x.ch->>'is_default')::boolean, false) AS dflt, x.ch->'keys' AS keys
      FROM jsonb_array_elements(p_checks) WITH ORDINALITY AS x(ch, ord)
  ), covered AS MATERIALIZED (
    -- A guardrail's keys through its own assignments (in its workspace).
    SELECT c.*, CASE WHEN c.scope = 'guardrail' THEN ARRAY(
             SELECT a.api_key_id FROM guardrail_key_assignments a JOIN api_keys k ON k.id = a.api_key_id
              WHERE a.guardrail_id = c.gid AND k.workspace_id = c.ws
             UNION
             SELECT k.id FROM guardrail_member_assignments m JOIN api_keys k ON k.creator_user_id = m.user_id AND k.workspace_id = c.ws
              WHERE m.guardrail_id = c.gid) END AS own
      FROM c
  ), sets AS (
    -- What each check sums: its workspace's totals (base), plus the keys in `plus`, less those in `minus`.
    SELECT c.ord, c.name, c.scope, c.since, c.byok, c.lim, c.keys,
           CASE WHEN c.scope = 'workspace' OR (c.scope = 'guardrail' AND c.dflt) THEN c.ws END AS base,
           CASE WHEN c.scope = 'keys' THEN ARRAY(SELECT l.id FROM routing_lineage(ARRAY(SELECT jsonb_array_elements_text(c.keys)::uuid)) l)
                WHEN c.scope = 'guardrail' AND NOT c.dflt THEN c.own
                ELSE '{}'::uuid[] END AS plus,
           CASE WHEN c.scope = 'guardrail' AND c.dflt THEN ARRAY(
                  SELECT a.api_key_id FROM guardrails g JOIN guardrail_key_assignments a ON a.guardrail_id = g.id
                    JOIN api_keys k ON k.id = a.api_key_id
                   WHERE g.workspace_id = c.ws AND k.workspace_id = c.ws
                  UNION
                  SELECT k.id FROM guardrails g JOIN guardrail_member_assignments m ON m.guardrail_id = g.id
                    JOIN api_keys k ON k.creator_user_id = m.user_id AND k.workspace_id = c.ws
                   WHERE g.workspace_id = c.ws
                  EXCEPT
                  SELECT unnest(c.own))
                ELSE '{}'::uuid[] END AS minus
      FROM covered c
  ), expired AS MATERIALIZED (
    -- Reservations past their time that the sweep has not deleted yet: still in the holds, held by nothing.
    SELECT r.workspace_id, r.api_key_id, r.amount FROM spend_reservations r
     WHERE v_holds AND r.organization_id = p_org AND r.expires_at <= p_now
  )
  SELECT s.name,
         CASE WHEN s.scope = 'credits' THEN
                (SELECT o.credit_balance FROM organizations o WHERE o.id = p_org)
                - CASE WHEN NOT v_holds THEN 0
                       ELSE coalesce((SELECT h.amount FROM spend_holds h WHERE h.organization_id = p_org AND h.scope = 'organization' AND h.scope_id = p_org), 0)
                          - coalesce((SELECT sum(e.amount) FROM expired e), 0) END
         WHEN s.scope = 'makers' THEN
           -- Each limited maker's limit in its own window, over the maker's lineage (its keys, as "keys").
           (SELECT min(m.lim
                       - CASE WHEN ml.since IS NULL THEN coalesce((SELECT sum(k.usage + CASE WHEN m.byok THEN k.byok_usage ELSE 0 END) FROM api_keys k WHERE k.id = ANY(ml.ids)), 0)
                              ELSE coalesce((SELECT sum(d.usage + CASE WHEN m.byok THEN d.byok_usage ELSE 0 END) FROM key_usage_daily d
                                              WHERE d.api_key_id = ANY(ml.ids) AND d.day >= ml.since), 0) END
                       - CASE WHEN NOT v_holds THEN 0
                              ELSE coalesce((SELECT sum(h.amount) FROM spend_holds h WHERE h.organization_id = p_org AND h.scope = 'key' AND h.scope_id = ANY(ml.ids::text[])), 0)
                                 - coalesce((SELECT sum(e.amount) FROM expired e WHERE e.api_key_id = ANY(ml.ids)), 0) END)
              FROM routing_makers((s.keys->>0)::uuid) m
             CROSS JOIN LATERAL (
               SELECT ARRAY(SELECT l.id FROM routing_lineage(ARRAY[m.id]) l) AS ids,
                      CASE WHEN m.reset IS NULL THEN NULL
                           ELSE date_trunc(CASE m.reset WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END, p_now AT TIME ZONE 'UTC')::date END AS since
             ) ml
             WHERE m.lim IS NOT NULL)
         ELSE s.lim
              - CASE WHEN s.base IS NULL THEN 0
                     WHEN s.since IS NULL THEN coalesce((SELECT w.usage + CASE WHEN s.byok THEN w.byok_usage ELSE 0 END FROM workspace_spend w WHERE w.workspace_id = s.base), 0)
                     ELSE coalesce((SELECT sum(w.usage + CASE WHEN s.byok THEN w.byok_usage ELSE 0 END) FROM workspace_spend_daily w
                                     WHERE w.workspace_id = s.base AND w.day >= s.since), 0) END
              - (CASE WHEN cardinality(s.plus) = 0 THEN 0
                WHEN s.since IS NULL THEN coalesce((SELECT sum(k.usage + CASE WHEN s.byok THEN k.byok_usage ELSE 0 END) FROM api_keys k WHERE k.id = ANY(s.plus)), 0)
                ELSE coalesce((SELECT sum(d.usage + CASE WHEN s.byok THEN d.byok_usage ELSE 0 END) FROM key_usage_daily d
                                WHERE d.api_key_id = ANY(s.plus) AND d.day >= s.since), 0) END)
              + (CASE WHEN cardinality(s.minus) = 0 THEN 0
                WHEN s.since IS NULL THEN coalesce((SELECT sum(k.usage + CASE WHEN s.byok THEN k.byok_usage ELSE 0 END) FROM api_keys k WHERE k.id = ANY(s.minus)), 0)
                ELSE coalesce((SELECT sum(d.usage + CASE WHEN s.byok THEN d.byok_usage ELSE 0 END) FROM key_usage_daily d
                                WHERE d.api_key_id = ANY(s.minus) AND d.day >= s.since), 0) END)
              - CASE WHEN s.base IS NULL OR NOT v_holds THEN 0
                     ELSE coalesce((SELECT h.amount FROM spend_holds h WHERE h.organization_id = p_org AND h.scope = 'workspace' AND h.scope_id = s.base::text), 0)
                        - coalesce((SELECT sum(e.amount) FROM expired e WHERE e.workspace_id = s.base), 0) END
              - (CASE WHEN cardinality(s.plus) = 0 OR NOT v_holds THEN 0
                ELSE coalesce((SELECT sum(h.amount) FROM spend_holds h WHERE h.organization_id = p_org AND h.scope = 'key' AND h.scope_id = ANY(s.plus::text[])), 0)
                   - coalesce((SELECT sum(e.amount) FROM expired e WHERE e.api_key_id = ANY(s.plus)), 0) END)
              + (CASE WHEN cardinality(s.minus) = 0 OR NOT v_holds THEN 0
                ELSE coalesce((SELECT sum(h.amount) FROM spend_holds h WHERE h.organization_id = p_org AND h.scope = 'key' AND h.scope_id = ANY(s.minus::text[])), 0)
                   - coalesce((SELECT sum(e.amount) FROM expired e WHERE e.api_key_id = ANY(s.minus)), 0) END)
         END
    FROM sets s
   ORDER BY s.ord;
END $$;

-- routing_reserve(...): under the organization's reservation lock (so that reservations of one
-- organization are decided one after another, on every replica), reads every check's remaining
-- amount in one snapshot, and holds the most it can up to `wanted` when every check has at least
-- `min` left: min = wanted holds exactly that or nothing (routing.authorize); min < wanted is a
-- partial grant. Returns whether it reserved, what it granted, and each check's remaining amount
-- (after the reservation when it reserved); a check with no figure (null: a "makers" check when no
-- maker has a limit) limits nothing. With R remaining and concurrent reservations of c
-- (min = wanted = c), exactly floor(R / c) of them succeed.
CREATE FUNCTION routing_reserve(p_id uuid, p_org text, p_workspace uuid, p_key uuid, p_min numeric, p_wanted numeric,
                                p_checks jsonb, p_now timestamptz, p_expires timestamptz)
RETURNS TABLE (reserved boolean, granted numeric, name text, remaining numeric) LANGUAGE plpgsql AS $$
DECLARE
  v_names text[];
  v_remaining numeric[];
  v_grant numeric;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('switchyard_spend:' || p_org, 0));
  -- A new snapshot, taken after the lock: it sees every reservation committed before it. The
  -- checks are read in it together (routing_spend is STABLE: one snapshot for all of them).
  SELECT array_agg(s.name), array_agg(s.remaining) INTO v_names, v_remaining FROM routing_spend(p_org, p_checks, p_now) s;
  SELECT least(p_wanted, coalesce(min(x), p_wanted)) INTO v_grant FROM unnest(v_remaining) x;
  IF v_grant < p_min OR v_grant <= 0 THEN
    v_grant := 0;
  ELSE
    INSERT INTO spend_reservations (id, organization_id, workspace_id, api_key_id, amount, created_at, expires_at)
    VALUES (p_id, p_org, p_workspace, p_key, v_grant, p_now, p_expires);
  END IF;
  RETURN QUERY SELECT v_grant > 0, v_grant, t.n, t.r - v_grant FROM unnest(v_names, v_remaining) AS t(n, r);
END $$;

-- Generic plans, as migration "routing_generic_plans" set them for the functions these replace.
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION routing_reserve(uuid, text, uuid, uuid, numeric, numeric, jsonb, timestamptz, timestamptz) SET plan_cache_mode = force_generic_plan;

-- routing_give_back(id, amount): a reservation keeps what it still needs; the rest of what it held
-- is free again at once (no lock: holding less never lets anything through that was refused). It
-- is deleted once it holds nothing. Returns what it still holds, or nothing if it was gone.
CREATE FUNCTION routing_give_back(p_id uuid, p_amount numeric)
RETURNS TABLE (organization_id text, held numeric) LANGUAGE sql AS $$
  WITH lowered AS (
    UPDATE spend_reservations r SET amount = r.amount - least(r.amount, greatest(p_amount, 0))
     WHERE r.id = p_id AND r.amount > p_amount
    RETURNING r.organization_id, r.amount
  ), emptied AS (
    DELETE FROM spend_reservations r WHERE r.id = p_id AND r.amount <= p_amount
    RETURNING r.organization_id, 0::numeric AS amount
  )
  SELECT organization_id, amount FROM lowered UNION ALL SELECT organization_id, amount FROM emptied
$$;
