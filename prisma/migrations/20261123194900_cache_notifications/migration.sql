-- Cache invalidation across replicas. Each server process keeps API key rows, the model catalog and
-- organizations' member order in memory, and LISTENs on the channel "switchyard_cache". These
-- triggers announce every committed write that changes what those caches hold, whoever makes it
-- (any replica, a script, psql): "key:<hash>", "organization:<id>", "members:<organization id>" or
-- "catalog". PostgreSQL sends notifications at commit only, and merges identical ones within a
-- transaction.

CREATE FUNCTION switchyard_notify_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('switchyard_cache', 'key:' || OLD.hash);
  IF TG_OP = 'UPDATE' AND NEW.hash IS DISTINCT FROM OLD.hash THEN
    PERFORM pg_notify('switchyard_cache', 'key:' || NEW.hash);
  END IF;
  RETURN NULL;
END $$;

-- Recording a generation moves usage, byok_usage and updated_at: those are never read from the
-- cached rows, so such updates are not announced. Any other change is (new columns included).
CREATE TRIGGER api_keys_notify_update AFTER UPDATE ON "api_keys" FOR EACH ROW
  WHEN ((to_jsonb(OLD) - ARRAY['usage', 'byok_usage', 'updated_at']) IS DISTINCT FROM (to_jsonb(NEW) - ARRAY['usage', 'byok_usage', 'updated_at']))
  EXECUTE FUNCTION switchyard_notify_key();
CREATE TRIGGER api_keys_notify_delete AFTER DELETE ON "api_keys" FOR EACH ROW
  EXECUTE FUNCTION switchyard_notify_key();
CREATE TRIGGER platform_keys_notify AFTER UPDATE OR DELETE ON "platform_keys" FOR EACH ROW
  EXECUTE FUNCTION switchyard_notify_key();

-- A disabled (or re-enabled) organization: every key of it is cached with its standing.
CREATE FUNCTION switchyard_notify_organization() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('switchyard_cache', 'organization:' || NEW.id);
  RETURN NULL;
END $$;

CREATE TRIGGER organizations_notify AFTER UPDATE OF disabled_at ON "organizations" FOR EACH ROW
  WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at)
  EXECUTE FUNCTION switchyard_notify_organization();

CREATE FUNCTION switchyard_notify_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('switchyard_cache', 'members:' || OLD.organization_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('switchyard_cache', 'members:' || NEW.organization_id);
  END IF;
  RETURN NULL;
END $$;

-- The member order is by (created_at, id): a role change does not move it.
CREATE TRIGGER organization_members_notify AFTER INSERT OR DELETE OR UPDATE OF organization_id, created_at
  ON "organization_members" FOR EACH ROW EXECUTE FUNCTION switchyard_notify_members();

CREATE FUNCTION switchyard_notify_catalog() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('switchyard_cache', 'catalog');
  RETURN NULL;
END $$;

CREATE TRIGGER models_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "models"
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_notify_catalog();
CREATE TRIGGER model_aliases_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "model_aliases"
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_notify_catalog();
CREATE TRIGGER model_variants_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "model_variants"
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_notify_catalog();
