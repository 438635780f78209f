-- CreateTable
CREATE TABLE "pending_objects" (
    "key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pending_objects_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "pending_objects_created_at_idx" ON "pending_objects"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "container_files_storage_key_key" ON "container_files"("storage_key");

-- CreateIndex
CREATE UNIQUE INDEX "documents_storage_key_key" ON "documents"("storage_key");
