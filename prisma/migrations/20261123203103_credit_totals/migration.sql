-- GET /credits answers the lifetime totals (credit added, spend recorded). Both are kept beside the
-- balance, in the same statements that move it, so that balance = total_credits - total_usage.

-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "total_credits" DECIMAL(40,12) NOT NULL DEFAULT 0,
ADD COLUMN     "total_usage" DECIMAL(40,12) NOT NULL DEFAULT 0;

-- Spend recorded so far is the keys' lifetime spend; the credit added so far is whatever makes the
-- current balance come out.
UPDATE "organizations" AS o
SET "total_usage" = s."usage", "total_credits" = o."credit_balance" + s."usage"
FROM (SELECT "organization_id", sum("usage") AS "usage" FROM "api_keys" GROUP BY "organization_id") AS s
WHERE s."organization_id" = o."id";
UPDATE "organizations" SET "total_credits" = "credit_balance" WHERE "total_usage" = 0 AND "credit_balance" > 0;
