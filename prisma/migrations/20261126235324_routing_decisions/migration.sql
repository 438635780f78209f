-- AlterTable
ALTER TABLE "model_endpoints" ADD COLUMN     "zdr" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "spend_reservations" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "amount" DECIMAL(28,12) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "spend_reservations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "organization_settings" (
    "organization_id" TEXT NOT NULL,
    "free_model_requests_per_minute" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "organization_settings_pkey" PRIMARY KEY ("organization_id")
);

-- CreateIndex
CREATE INDEX "spend_reservations_organization_id_expires_at_idx" ON "spend_reservations"("organization_id", "expires_at");

-- CreateIndex
CREATE INDEX "spend_reservations_expires_at_idx" ON "spend_reservations"("expires_at");

-- AddForeignKey
ALTER TABLE "spend_reservations" ADD CONSTRAINT "spend_reservations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "organization_settings" ADD CONSTRAINT "organization_settings_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What routing.authorize decides by (modules/routing): the spend of a limit in its window, and the
-- reservation that holds an estimated cost against every limit at once, exactly.
--
-- routing_spend(org, checks, now): for each check, the limit's remaining amount: its `limit` less
-- the spend recorded in its window and the spend held by open reservations, both read by one
-- statement (one snapshot), so that a recording, which settles its reservation and adds its spend
-- in one transaction, is seen wholly or not at all. A check is a JSON object:
--   name    what the answer calls it (e.g. "key", "budget:monthly", "guardrail:<id>", "credits")
--   scope   "keys" (the keys in `keys`), "workspace" (every key of `workspace_id`), "guardrail"
--           (the keys `guardrail_id` covers in `workspace_id`: assigned, or through their user, or,
--           for the workspace's default guardrail (`is_default`), every key there with no
--           assignment), or "credits" (the organization's credit balance)
--   since   the first UTC day of the window; null: the key's lifetime totals
--   byok    whether BYOK spend counts
--   limit   the limit in USD (ignored for credits, whose limit is the balance)
CREATE FUNCTION routing_covered_keys(p_check jsonb) RETURNS TABLE (id uuid) LANGUAGE sql STABLE AS $$
  SELECT k.id FROM api_keys k
  WHERE p_check->>'scope' = 'keys' AND k.id IN (SELECT jsonb_array_elements_text(p_check->'keys')::uuid)
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

CREATE FUNCTION routing_spend(p_org text, p_checks jsonb, p_now timestamptz)
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

-- routing_reserve(...): under the organization's reservation lock (so that reservations of one
-- organization are decided one after another, on every replica), reads every check's remaining
-- amount, and holds `amount` only when every one of them has at least that much left. Returns
-- whether it reserved, and each check's remaining amount (after the reservation when it reserved).
-- With R remaining and concurrent reservations of c, exactly floor(R / c) of them succeed.
CREATE FUNCTION routing_reserve(p_id uuid, p_org text, p_workspace uuid, p_key uuid, p_amount numeric,
                                p_checks jsonb, p_now timestamptz, p_expires timestamptz)
RETURNS TABLE (reserved boolean, name text, remaining numeric) LANGUAGE plpgsql AS $$
DECLARE
  v_names text[];
  v_remaining numeric[];
  v_ok boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('switchyard_spend:' || p_org, 0));
  -- A new snapshot, taken after the lock: it sees every reservation committed before it. The
  -- checks are read in it together (routing_spend is STABLE: one snapshot for all of them).
  SELECT array_agg(s.name), array_agg(s.remaining) INTO v_names, v_remaining FROM routing_spend(p_org, p_checks, p_now) s;
  SELECT coalesce(bool_and(x >= p_amount), true) INTO v_ok FROM unnest(v_remaining) x;
  IF v_ok THEN
    INSERT INTO spend_reservations (id, organization_id, workspace_id, api_key_id, amount, created_at, expires_at)
    VALUES (p_id, p_org, p_workspace, p_key, p_amount, p_now, p_expires);
  END IF;
  RETURN QUERY SELECT v_ok, t.n, CASE WHEN v_ok THEN t.r - p_amount ELSE t.r END FROM unnest(v_names, v_remaining) AS t(n, r);
END $$;

-- Each process keeps, per workspace, what routing decides by (budgets, BYOK credentials, the
-- workspace's settings, the organization's settings): these announce every committed write as
-- "routing:<organization id>" on the channel of the cache_notifications migration.
CREATE TRIGGER budgets_notify AFTER INSERT OR UPDATE OR DELETE ON "budgets"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('routing');
CREATE TRIGGER byok_credentials_notify AFTER INSERT OR UPDATE OR DELETE ON "byok_credentials"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('routing');
CREATE TRIGGER workspaces_routing_notify AFTER UPDATE OF include_byok_in_budgets, default_provider_sort, deleted_at ON "workspaces"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('routing');
CREATE TRIGGER organization_settings_notify AFTER INSERT OR UPDATE OR DELETE ON "organization_settings"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('routing');
