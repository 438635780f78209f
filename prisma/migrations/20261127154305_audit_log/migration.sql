-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "organization_id" TEXT,
    "actor_kind" TEXT NOT NULL,
    "actor_key_hash" TEXT,
    "actor_label" TEXT,
    "actor_user_id" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT,
    "changes" JSONB NOT NULL DEFAULT '{}',
    "request_id" TEXT,
    "client_address" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dedupe_key" TEXT,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_dedupe_key_key" ON "audit_log"("dedupe_key");

-- CreateIndex
CREATE INDEX "audit_log_organization_id_created_at_id_idx" ON "audit_log"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_log_organization_id_actor_key_hash_created_at_idx" ON "audit_log"("organization_id", "actor_key_hash", "created_at" DESC);

-- CreateIndex
CREATE INDEX "audit_log_organization_id_action_created_at_idx" ON "audit_log"("organization_id", "action", "created_at" DESC);

-- CreateIndex
CREATE INDEX "audit_log_organization_id_target_type_target_id_created_at_idx" ON "audit_log"("organization_id", "target_type", "target_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "audit_log_created_at_id_idx" ON "audit_log"("created_at" DESC, "id" DESC);

-- Append-only (decision 0024): no statement updates an entry; the only delete is the retention
-- sweep, which sets switchyard.audit_retention = 'on' for its own transaction (SET LOCAL).
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('switchyard.audit_retention', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_log_append_only
  BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_log_no_truncate
  BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
