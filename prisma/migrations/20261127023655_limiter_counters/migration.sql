-- CreateTable
CREATE TABLE "limiter_counters" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "limiter_counters_pkey" PRIMARY KEY ("key")
);
