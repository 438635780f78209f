-- events.seq: the order of writing, where created_at ties. Added in three steps instead of as a
-- BIGSERIAL column, which would fill every existing row and so rewrite the table under an exclusive
-- lock: a nullable column without a default is a change of the catalog alone, and a default set
-- afterwards applies to new rows only. Existing events keep seq null and sort first among their
-- ties (docs/events.md).
CREATE SEQUENCE "events_seq_seq";
ALTER TABLE "events" ADD COLUMN "seq" BIGINT;
ALTER TABLE "events" ALTER COLUMN "seq" SET DEFAULT nextval('"events_seq_seq"');
ALTER SEQUENCE "events_seq_seq" OWNED BY "events"."seq";
