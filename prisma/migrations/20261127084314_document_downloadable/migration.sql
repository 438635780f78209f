-- AlterTable
ALTER TABLE "documents" ADD COLUMN     "downloadable" BOOLEAN NOT NULL DEFAULT true;
