-- DropIndex
DROP INDEX "generation_feedback_generation_id_idx";

-- CreateIndex
CREATE UNIQUE INDEX "generation_feedback_generation_id_user_id_key" ON "generation_feedback"("generation_id", "user_id");
