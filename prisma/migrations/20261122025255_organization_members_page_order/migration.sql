-- CreateIndex
CREATE INDEX "organization_members_organization_id_created_at_id_idx" ON "organization_members"("organization_id", "created_at", "id");
