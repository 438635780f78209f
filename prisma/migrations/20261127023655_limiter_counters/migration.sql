-- CreateTable
CREATE TABLE "limiter_counters" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "limiter_counters_pkey" PRIMARY KEY ("key")
);

-- Counts of a minute are not worth a WAL flush per request: the table is unlogged, so a consume
-- does not wait for its commit to reach the disk. A crash of PostgreSQL empties it (every window
-- starts again), and standbys do not have it (after a failover, the same). Measured in
-- docs/decisions/0017-counter-store.md.
ALTER TABLE "limiter_counters" SET UNLOGGED;
