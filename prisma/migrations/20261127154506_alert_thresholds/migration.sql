-- Alert thresholds in the organization's settings row (issue 40; docs/events.md): the percentages of
-- a key limit, workspace budget or guardrail limit at which limit.threshold_crossed fires (an empty
-- list: none), and the credit balance in USD under which credits.low fires (null: never). An
-- organization without a settings row has the defaults.
-- AlterTable
ALTER TABLE "organization_settings" ADD COLUMN     "alert_thresholds" INTEGER[] DEFAULT ARRAY[50, 80, 100]::INTEGER[],
ADD COLUMN     "credits_low_usd" DECIMAL(28,12);
