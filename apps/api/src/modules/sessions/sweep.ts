// The sessions sweep (docs/sessions.md), a periodic job of the module (one replica a round).
import type { Db } from '@switchyard/db';

/** The sweep's advisory lock (jobs/runner.ts). */
export const SESSION_SWEEP_LOCK = 0x5345_5353; // "SESS"

/**
 * Deletes the sessions that can never be used again: signed out, past their idle or absolute end,
 * or whose key was disabled, deleted, expired or rotated (the secret it was signed in with is no
 * longer the key's current one). Answers how many went.
 */
export async function sweepSessions(db: Db, now: Date): Promise<number> {
  return db.$executeRaw`
    DELETE FROM sessions s
    WHERE s.ended_at IS NOT NULL OR s.idle_expires_at <= ${now} OR s.expires_at <= ${now}
       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.api_key_id AND (k.disabled OR k.deleted_at IS NOT NULL OR k.expires_at <= ${now}))
       OR EXISTS (SELECT 1 FROM api_key_secrets x WHERE x.secret_hash = s.key_secret_hash AND x.expires_at IS NOT NULL)`;
}
