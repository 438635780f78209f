-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "minted_by_key_id" UUID;

-- AlterTable
ALTER TABLE "organization_settings" ADD COLUMN     "pkce_require_s256" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "api_keys_minted_by_key_id_idx" ON "api_keys"("minted_by_key_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_minted_by_key_id_fkey" FOREIGN KEY ("minted_by_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Keys minted through an authorization code (D10/D11) record their maker (minted_by_key_id), and
-- two rules follow from it (docs/decisions/0041-minted-keys-spend-from-their-maker.md):
--
-- 1. A minted key spends from its maker's limit. A key's limit counts the spend and the open
--    reservations of the key and of every key minted from it, at any depth (routing_lineage); a
--    minted key is also checked against the limit of every maker above it (the check of scope
--    "makers"). Both are read under the organization's reservation lock, so that concurrent
--    reservations of c against a maker's remaining R, through the maker and its minted keys
--    together, hold exactly floor(R / c).
-- 2. A minted key never outlives its maker: disabling or deleting the maker disables or deletes the
--    keys minted from it, and a maker's expiry caps theirs (api_keys_end_minted). These are row
--    updates, so each one announces "key:<hash>" (api_keys_notify_update) and every replica forgets
--    the key at once. Re-enabling the maker, or moving its expiry later, does not bring them back.
--    Keys a management key makes with POST /keys record no maker: deleting an admin's key ends none
--    of them.
--
-- Old rows (keys minted before this migration): each gets its maker from the authorization code
-- that made it (authorization_codes.key_hash names the minted key, creator_key_hash its maker). The
-- limit each one copied stays as it was, but from now on its spend counts toward its maker's limit
-- as well, so it can no longer add to what the maker may spend; spend already made beyond the
-- maker's limit is not undone (`switchyard audit widened-keys` reports such keys). A minted key
-- whose maker is already disabled or deleted is disabled or deleted with it now, and one whose maker
-- expires gets that expiry when it had none or a later one.

UPDATE api_keys m SET minted_by_key_id = maker.id
  FROM authorization_codes c
  JOIN api_keys maker ON maker.hash = c.creator_key_hash AND maker.organization_id = c.organization_id
  WHERE c.key_hash = m.hash AND c.organization_id = m.organization_id AND m.minted_by_key_id IS NULL AND maker.id <> m.id;

-- The key and every key minted from it, at any depth (bounded: a chain is made one code at a time).
CREATE FUNCTION routing_lineage(p_roots uuid[]) RETURNS TABLE (id uuid) LANGUAGE sql STABLE AS $$
  WITH RECURSIVE l(id, depth) AS (
    SELECT r, 0 FROM unnest(p_roots) AS r
    UNION ALL
    SELECT k.id, l.depth + 1 FROM api_keys k JOIN l ON k.minted_by_key_id = l.id WHERE l.depth < 32
  )
  SELECT l.id FROM l
$$;

-- A "keys" check now covers the keys named and what they minted. New scope "makers": `keys` names
-- one key; the check's remaining amount is the least of what each of its makers with a limit has
-- left (routing_spend), null when no maker above it has a limit.
CREATE OR REPLACE FUNCTION routing_covered_keys(p_check jsonb) RETURNS TABLE (id uuid) LANGUAGE sql STABLE AS $$
  SELECT l.id FROM routing_lineage(ARRAY(SELECT jsonb_array_elements_text(p_check->'keys')::uuid)) l
  WHERE p_check->>'scope' = 'keys'
  UNION ALL
  SELECT k.id FROM api_keys k
  WHERE p_check->>'scope' = 'workspace' AND k.workspace_id = (p_check->>'workspace_id')::uuid
  UNION ALL
  SELECT k.id FROM api_keys k
  WHERE p_check->>'scope' = 'guardrail' AND k.workspace_id = (p_check->>'workspace_id')::uuid
    AND (EXISTS (SELECT 1 FROM guardrail_key_assignments a WHERE a.guardrail_id = (p_check->>'guardrail_id')::uuid AND a.api_key_id = k.id)
      OR EXISTS (SELECT 1 FROM guardrail_member_assignments m WHERE m.guardrail_id = (p_check->>'guardrail_id')::uuid AND m.user_id = k.creator_user_id)
      OR (coalesce((p_check->>'is_default')::boolean, false)
          AND NOT EXISTS (SELECT 1 FROM guardrail_key_assignments a JOIN guardrails g ON g.id = a.guardrail_id
                          WHERE a.api_key_id = k.id AND g.workspace_id = k.workspace_id)
          AND NOT EXISTS (SELECT 1 FROM guardrail_member_assignments m JOIN guardrails g ON g.id = m.guardrail_id
                          WHERE m.user_id = k.creator_user_id AND g.workspace_id = k.workspace_id)))
$$;

-- The makers above a key, nearest first, with their limits.
CREATE FUNCTION routing_makers(p_key uuid) RETURNS TABLE (id uuid, lim numeric, reset limit_reset, byok boolean) LANGUAGE sql STABLE AS $$
  WITH RECURSIVE up(id, lim, reset, byok, next, depth) AS (
    SELECT m.id, m."limit", m.limit_reset, m.include_byok_in_limit, m.minted_by_key_id, 1
    FROM api_keys k JOIN api_keys m ON m.id = k.minted_by_key_id WHERE k.id = p_key
    UNION ALL
    SELECT m.id, m."limit", m.limit_reset, m.include_byok_in_limit, m.minted_by_key_id, up.depth + 1
    FROM up JOIN api_keys m ON m.id = up.next WHERE up.depth < 32
  )
  SELECT up.id, up.lim, up.reset, up.byok FROM up
$$;

CREATE OR REPLACE FUNCTION routing_spend(p_org text, p_checks jsonb, p_now timestamptz)
RETURNS TABLE (name text, remaining numeric) LANGUAGE plpgsql STABLE AS $$
DECLARE
  c jsonb;
  v_byok boolean;
BEGIN
  FOR c IN SELECT jsonb_array_elements(p_checks) LOOP
    name := c->>'name';
    v_byok := coalesce((c->>'byok')::boolean, false);
    IF c->>'scope' = 'credits' THEN
      SELECT o.credit_balance - coalesce((SELECT sum(r.amount) FROM spend_reservations r
                                          WHERE r.organization_id = p_org AND r.expires_at > p_now), 0)
        INTO remaining FROM organizations o WHERE o.id = p_org;
    ELSIF c->>'scope' = 'makers' THEN
      -- Each maker's limit in its own window, over the maker's whole lineage.
      SELECT min(m.lim
                 - CASE WHEN m.reset IS NULL THEN
                     coalesce((SELECT sum(a.usage + CASE WHEN m.byok THEN a.byok_usage ELSE 0 END) FROM api_keys a
                               WHERE a.id IN (SELECT l.id FROM routing_lineage(ARRAY[m.id]) l)), 0)
                   ELSE
                     coalesce((SELECT sum(d.usage + CASE WHEN m.byok THEN d.byok_usage ELSE 0 END) FROM key_usage_daily d
                               WHERE d.api_key_id IN (SELECT l.id FROM routing_lineage(ARRAY[m.id]) l)
                                 AND d.day >= date_trunc(CASE m.reset WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' ELSE 'month' END,
                                                         p_now AT TIME ZONE 'UTC')::date), 0)
                   END
                 - coalesce((SELECT sum(r.amount) FROM spend_reservations r
                             WHERE r.organization_id = p_org AND r.expires_at > p_now
                               AND r.api_key_id IN (SELECT l.id FROM routing_lineage(ARRAY[m.id]) l)), 0))
        INTO remaining
        FROM routing_makers((c->'keys'->>0)::uuid) m WHERE m.lim IS NOT NULL;
    ELSIF c->>'since' IS NULL THEN
      WITH k AS MATERIALIZED (SELECT id FROM routing_covered_keys(c))
      SELECT (c->>'limit')::numeric
             - coalesce((SELECT sum(a.usage + CASE WHEN v_byok THEN a.byok_usage ELSE 0 END) FROM api_keys a WHERE a.id IN (SELECT id FROM k)), 0)
             - coalesce((SELECT sum(r.amount) FROM spend_reservations r
                         WHERE r.organization_id = p_org AND r.expires_at > p_now AND r.api_key_id IN (SELECT id FROM k)), 0)
        INTO remaining;
    ELSE
      WITH k AS MATERIALIZED (SELECT id FROM routing_covered_keys(c))
      SELECT (c->>'limit')::numeric
             - coalesce((SELECT sum(d.usage + CASE WHEN v_byok THEN d.byok_usage ELSE 0 END) FROM key_usage_daily d
                         WHERE d.api_key_id IN (SELECT id FROM k) AND d.day >= (c->>'since')::date), 0)
             - coalesce((SELECT sum(r.amount) FROM spend_reservations r
                         WHERE r.organization_id = p_org AND r.expires_at > p_now AND r.api_key_id IN (SELECT id FROM k)), 0)
        INTO remaining;
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;
-- CREATE OR REPLACE keeps the function's SET clause only when repeated (migration "routing_generic_plans").
ALTER FUNCTION routing_spend(text, jsonb, timestamptz) SET plan_cache_mode = force_generic_plan;

-- A maker's end ends what it minted. Each update of a minted key fires this trigger on that key in
-- turn, so the rule reaches every depth.
CREATE FUNCTION api_keys_end_minted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL THEN
    UPDATE api_keys SET deleted_at = NEW.deleted_at, disabled = true, updated_at = NEW.updated_at
      WHERE minted_by_key_id = NEW.id AND deleted_at IS NULL;
  ELSIF NEW.disabled AND NOT OLD.disabled THEN
    UPDATE api_keys SET disabled = true, updated_at = NEW.updated_at WHERE minted_by_key_id = NEW.id AND NOT disabled;
  END IF;
  IF NEW.expires_at IS NOT NULL AND NEW.expires_at IS DISTINCT FROM OLD.expires_at THEN
    UPDATE api_keys SET expires_at = NEW.expires_at, updated_at = NEW.updated_at
      WHERE minted_by_key_id = NEW.id AND (expires_at IS NULL OR expires_at > NEW.expires_at);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_end_minted AFTER UPDATE OF deleted_at, disabled, expires_at ON "api_keys" FOR EACH ROW
  EXECUTE FUNCTION api_keys_end_minted();

-- The old rows, under the same rules: what their makers' state already ends.
UPDATE api_keys m SET deleted_at = maker.deleted_at, disabled = true
  FROM api_keys maker WHERE m.minted_by_key_id = maker.id AND maker.deleted_at IS NOT NULL AND m.deleted_at IS NULL;
UPDATE api_keys m SET disabled = true
  FROM api_keys maker WHERE m.minted_by_key_id = maker.id AND maker.disabled AND NOT m.disabled;
UPDATE api_keys m SET expires_at = maker.expires_at
  FROM api_keys maker WHERE m.minted_by_key_id = maker.id AND maker.expires_at IS NOT NULL
    AND (m.expires_at IS NULL OR m.expires_at > maker.expires_at);
