-- Each server process now also keeps, per key, the guardrails that apply to it (GET /model checks
-- them on every request). These triggers announce every committed write to guardrails and to their
-- key and member assignments, whoever makes it, as "guardrails:<organization id>" on the channel of
-- the cache_notifications migration; each process then forgets that organization's entries.
-- Cascades (a workspace's guardrails, a removed member's assignments) fire them too. PostgreSQL
-- merges identical notifications within a transaction, so assigning 1,000 keys announces once.
--
-- One function announces "<prefix>:<organization id>" for rows of an organization (the prefix is
-- the trigger's argument); the member-order trigger, which had a function of its own with the same
-- body, uses it too.

CREATE FUNCTION switchyard_notify_organization_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('switchyard_cache', TG_ARGV[0] || ':' || OLD.organization_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('switchyard_cache', TG_ARGV[0] || ':' || NEW.organization_id);
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER organization_members_notify ON "organization_members";
CREATE TRIGGER organization_members_notify AFTER INSERT OR DELETE OR UPDATE OF organization_id, created_at
  ON "organization_members" FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('members');
DROP FUNCTION switchyard_notify_members();

CREATE TRIGGER guardrails_notify AFTER INSERT OR UPDATE OR DELETE ON "guardrails"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('guardrails');
CREATE TRIGGER guardrail_key_assignments_notify AFTER INSERT OR UPDATE OR DELETE ON "guardrail_key_assignments"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('guardrails');
CREATE TRIGGER guardrail_member_assignments_notify AFTER INSERT OR UPDATE OR DELETE ON "guardrail_member_assignments"
  FOR EACH ROW EXECUTE FUNCTION switchyard_notify_organization_rows('guardrails');
