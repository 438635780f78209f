-- CreateTable
CREATE TABLE "api_key_secrets" (
    "secret_hash" TEXT NOT NULL,
    "api_key_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_key_secrets_pkey" PRIMARY KEY ("secret_hash")
);

-- CreateIndex
CREATE INDEX "api_key_secrets_api_key_id_created_at_idx" ON "api_key_secrets"("api_key_id", "created_at");

-- AddForeignKey
ALTER TABLE "api_key_secrets" ADD CONSTRAINT "api_key_secrets_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every key has its first secret, whose hash is the key's stable hash: the existing keys' now, and
-- every key made from now on through this trigger, whichever path inserts it (POST /keys, the
-- platform's management keys, the authorization-code exchange, bootstrap, scripts).
INSERT INTO "api_key_secrets" ("secret_hash", "api_key_id", "organization_id", "created_at")
SELECT "hash", "id", "organization_id", "created_at" FROM "api_keys";

CREATE FUNCTION switchyard_api_key_first_secret() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO api_key_secrets (secret_hash, api_key_id, organization_id, created_at)
  VALUES (NEW.hash, NEW.id, NEW.organization_id, NEW.created_at);
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_first_secret AFTER INSERT ON "api_keys" FOR EACH ROW
  EXECUTE FUNCTION switchyard_api_key_first_secret();
