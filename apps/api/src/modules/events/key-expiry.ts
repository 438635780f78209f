// `key.expiring`: an event 7 days and again 1 day before a key's `expires_at`, emitted into
// the events outbox by a periodic job of the job runner (one replica a round). Each notice is
// emitted once: its cause, `key.expiring:<key id>:<expires_at>:<7d|1d>`, is unique in the outbox, so
// rounds that see the key again, on any replica, write nothing. A key whose expiry changes gets the
// notices of its new expiry. A key first seen inside the last day gets the 1-day notice only.
import { queryRows, statement, type Db } from '@switchyard/db';
import { z } from 'zod';

export const KEY_EXPIRING = 'key.expiring';
/** The payload's version: fields are only added within it; a field removed or changed in meaning is a new version (docs/events.md). */
export const KEY_EXPIRING_VERSION = 1;
/** The advisory lock of the job (any constant no other lock of this database uses). */
export const KEY_EXPIRY_LOCK = 0x4b45_5850; // "KEXP"

const DAY_S = 86_400;

const EMIT = statement(
  `INSERT INTO events (id, organization_id, workspace_id, type, cause, payload, created_at)
   SELECT gen_random_uuid(), k.organization_id, k.workspace_id, '${KEY_EXPIRING}',
          '${KEY_EXPIRING}:' || k.id || ':' || to_char(k.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ':' || n.notice,
          jsonb_build_object(
            'version', ${KEY_EXPIRING_VERSION},
            'notice', n.notice,
            'api_key', jsonb_build_object('id', k.id, 'hash', k.hash, 'hash_prefix', left(k.hash, 12), 'name', k.name),
            'workspace_id', k.workspace_id,
            'expires_at', to_char(k.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
          $1::timestamptz
     FROM api_keys k
    CROSS JOIN LATERAL (SELECT CASE WHEN k.expires_at <= $1::timestamptz + make_interval(secs => ${DAY_S}) THEN '1d' ELSE '7d' END AS notice) n
    WHERE k.expires_at > $1::timestamptz
      AND k.expires_at <= $1::timestamptz + make_interval(secs => ${7 * DAY_S})
      AND k.deleted_at IS NULL
      AND NOT k.disabled
   ON CONFLICT (cause) DO NOTHING
   RETURNING id::text AS id`,
  z.object({ id: z.string() }),
);

/** Emits the notices due at `now`; answers how many were new. */
export async function emitKeyExpiryNotices(db: Db, now: Date): Promise<number> {
  return (await queryRows(db, EMIT, [now])).length;
}
