// A destination's secrets at rest (destinations.service.ts): the config secrets (DESTINATION_SECRET_KEYS
// and every header value), sealed together as one JSON object bound to the row id and shown masked
// in `config`, and a webhook destination's signing secret, sealed on its own (bound to `<id>:signing`).
// Delivery (events/delivery.ts) opens them to send; byok.resealSecrets re-encrypts them after a key
// rotation.
import type { Db, ObservabilityDestination as DestinationRow, Prisma } from '@switchyard/db';
import { isReservedDestinationHeader } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { tenantWhere } from '../../access/tenancy.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** A secret as answers show it: first 3 characters, "...", last 4; 8 characters or fewer: "****". */
export function maskSecret(secret: string): string {
  return secret.length <= 8 ? '****' : `${secret.slice(0, 3)}...${secret.slice(-4)}`;
}

export type Config = Record<string, unknown> & { headers?: Record<string, string> };
export interface SecretBundle {
  [key: string]: unknown;
  headers?: Record<string, string>;
}

/** What a signing secret's ciphertext is bound to. */
export const signingAd = (id: string) => `${id}:signing`;

/** The plaintext config of a row: its shown config with the sealed secrets put back (delivery reads it too). */
export function plaintextConfig(box: SecretBox, row: DestinationRow): Config {
  const config = { ...(row.config as Config) };
  if (!row.secrets_ciphertext) return config;
  const secrets = JSON.parse(box.open(row.secrets_ciphertext, row.id)) as SecretBundle;
  for (const [key, value] of Object.entries(secrets)) if (key !== 'headers') config[key] = value;
  if (secrets.headers) config.headers = { ...secrets.headers };
  return config;
}

/**
 * The config's headers a sender may send: without those the sender owns (hop-by-hop, framing, Host,
 * its own), which a row written before writes refused them may still hold.
 */
export function sendableHeaders(config: { headers?: Record<string, string> }): Record<string, string> {
  return Object.fromEntries(Object.entries(config.headers ?? {}).filter(([name]) => !isReservedDestinationHeader(name)));
}

/** A webhook destination's signing secret in plaintext (delivery signs with it); null when it has none. */
export function openSigningSecret(box: SecretBox, row: Pick<DestinationRow, 'id' | 'signing_secret_ciphertext'>): string | null {
  return row.signing_secret_ciphertext ? box.open(row.signing_secret_ciphertext, signingAd(row.id)) : null;
}

/**
 * byok.resealSecrets, for destinations: re-encrypts the organization's destination secrets (config
 * secrets and signing secrets) still sealed by an older key, with `db` (byok.resealSecrets'
 * transaction). Returns how many values were resealed.
 */
export async function resealDestinationSecrets(db: Db | Prisma.TransactionClient, box: SecretBox, actor: Actor): Promise<{ resealed: number }> {
  const current = `v1.${box.currentKeyId}.`;
  const rows = await db.observabilityDestination.findMany({
    where: {
      ...tenantWhere(actor),
      OR: [
        { secrets_ciphertext: { not: null }, NOT: { secrets_ciphertext: { startsWith: current } } },
        { signing_secret_ciphertext: { not: null }, NOT: { signing_secret_ciphertext: { startsWith: current } } },
      ],
    },
    select: { id: true, secrets_ciphertext: true, signing_secret_ciphertext: true },
  });
  let resealed = 0;
  for (const row of rows) {
    // Each conditional on the ciphertext read, so a concurrent write or delete is never overwritten.
    if (row.secrets_ciphertext && !row.secrets_ciphertext.startsWith(current)) {
      await db.observabilityDestination.updateMany({
        where: { id: row.id, secrets_ciphertext: row.secrets_ciphertext },
        data: { secrets_ciphertext: box.reseal(row.secrets_ciphertext, row.id) },
      });
      resealed++;
    }
    if (row.signing_secret_ciphertext && !row.signing_secret_ciphertext.startsWith(current)) {
      await db.observabilityDestination.updateMany({
        where: { id: row.id, signing_secret_ciphertext: row.signing_secret_ciphertext },
        data: { signing_secret_ciphertext: box.reseal(row.signing_secret_ciphertext, signingAd(row.id)) },
      });
      resealed++;
    }
  }
  return { resealed };
}
