-- Names belong to the membership: what one organization writes about a person is not shown to, or
-- changed by, another. Users keep only the shared identity (id, email).

-- AlterTable
ALTER TABLE "organization_members" ADD COLUMN     "first_name" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "last_name" TEXT NOT NULL DEFAULT '';

-- Carry the names over to the membership of the organization that wrote them. A user's names were
-- written only when the user was created, together with their first membership; every later
-- organization got the first one's names without writing any, so its membership starts empty (it
-- can set its own with organization.updateMember). Should the first membership be gone, the names
-- go to the oldest remaining one: an organization that already saw them.
UPDATE "organization_members" AS m
SET "first_name" = u."first_name", "last_name" = u."last_name"
FROM "users" AS u,
     (SELECT DISTINCT ON ("user_id") "id" FROM "organization_members" ORDER BY "user_id", "created_at", "id") AS first
WHERE m."id" = first."id" AND u."id" = m."user_id" AND (u."first_name" <> '' OR u."last_name" <> '');

-- AlterTable
ALTER TABLE "users" DROP COLUMN "first_name",
DROP COLUMN "last_name";
