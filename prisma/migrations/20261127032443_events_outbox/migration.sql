-- The events outbox (issue 36 §4, to issue 40's interface): one row per event, emitted exactly
-- once, because `cause` is unique and every writer inserts with ON CONFLICT (cause) DO NOTHING.
-- Routing refusals are its first writer (apps/api/src/modules/events/). Nothing delivers yet:
-- issue 40 adds delivery on top (destinations, the one job runner, a delivery state per event and
-- destination), reading the oldest rows first through events_created_at_idx. The shape is decision
-- 0019 (docs/decisions/0019-events-outbox.md).
-- CreateTable
CREATE TABLE "events" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "workspace_id" UUID,
    "type" TEXT NOT NULL,
    "cause" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "events_cause_key" ON "events"("cause");

-- CreateIndex
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

-- CreateIndex
CREATE INDEX "events_organization_id_created_at_idx" ON "events"("organization_id", "created_at");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
