-- Delivery of the events outbox (issue 40; decision 0025): one event_deliveries row per event and
-- destination, made once by the dispatch job (events.dispatched_at marks the events it has seen),
-- taken by one worker at a time and retried with backoff. Events emitted before delivery existed
-- are marked dispatched here: no destination is sent a backlog of old notices on upgrade.
-- AlterTable
ALTER TABLE "events" ADD COLUMN     "dispatched_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "observability_destinations" ADD COLUMN     "disabled_reason" TEXT,
ADD COLUMN     "failing_since" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "event_deliveries" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "event_id" UUID NOT NULL,
    "destination_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "last_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "event_deliveries_destination_id_status_idx" ON "event_deliveries"("destination_id", "status");

-- CreateIndex
CREATE INDEX "event_deliveries_status_next_attempt_at_idx" ON "event_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "event_deliveries_organization_id_idx" ON "event_deliveries"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "event_deliveries_event_id_destination_id_key" ON "event_deliveries"("event_id", "destination_id");

-- CreateIndex
CREATE INDEX "events_dispatched_at_created_at_idx" ON "events"("dispatched_at", "created_at");

-- AddForeignKey
ALTER TABLE "event_deliveries" ADD CONSTRAINT "event_deliveries_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_deliveries" ADD CONSTRAINT "event_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_deliveries" ADD CONSTRAINT "event_deliveries_destination_id_fkey" FOREIGN KEY ("destination_id") REFERENCES "observability_destinations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Events written before delivery existed are not delivered.
UPDATE "events" SET "dispatched_at" = "created_at";
