// The bounded audit of BYOK secrets revealed (docs/audit.md "byok.reveal"):
// routing.authorize answers the routing service with the plaintext of each BYOK credential it routes
// to, on the data plane, many times a second. Each reveal is not an entry: one entry per credential
// per hour (the bucket) is, naming the platform key that asked, the credential, and when it was first
// revealed in that hour.
//
// Written off the request path: note() only touches a map in memory (no I/O, nothing awaited); a
// timer writes what is pending in one statement per tick, INSERT ... ON CONFLICT (dedupe_key) DO
// NOTHING on `byok.reveal:<credential id>:<hour start ISO>`, so that replicas revealing the same
// credential in the same hour still make one row. A failed write is logged and tried again at the next
// tick; it never fails a routing answer (the answer went out before).
import type { Db } from '@switchyard/db';
import { isConnectionLost } from '../../lib/db-errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Audit } from './audit.js';

export const BYOK_REVEAL_ACTION = 'byok.reveal';

export interface ByokRevealsOptions {
  db: Db;
  now: () => Date;
  logger: Logger;
  /** How often pending entries are written (default 1 s). */
  flushMs?: number;
  /** The width of a bucket: one entry per credential per bucket (default one hour). */
  bucketMs?: number;
  /** The most distinct credentials kept in memory, pending or written in the current bucket (default 10,000); more are dropped (and logged). */
  maxEntries?: number;
}

/** The credential revealed, as the entry names it: never its secret or ciphertext. */
export interface RevealedCredential {
  id: string;
  organization_id: string;
  provider: string;
  /** Its masked label, as answers show it. */
  label: string;
}

interface Entry {
  dedupeKey: string;
  bucket: number;
  audit: Audit;
  credential: RevealedCredential;
  /** pending: to write; writing: in the statement now; written: in the table (kept to deduplicate until its bucket ends). */
  state: 'pending' | 'writing' | 'written';
}

export class ByokReveals {
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #logger: Logger;
  readonly #bucketMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> | undefined;
  #closed = false;
  #dropped = 0;

  constructor(options: ByokRevealsOptions) {
    this.#db = options.db;
    this.#now = options.now;
    this.#logger = options.logger;
    this.#bucketMs = options.bucketMs ?? 3_600_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 1000);
    this.#timer.unref();
  }

  /**
   * Notes that `credential` was revealed to the actor of `audit` (a platform key), at `audit.at`.
   * Synchronous, no I/O: the first reveal of a credential in its hour becomes an entry at the next
   * flush; the others are already counted by it.
   */
  note(audit: Audit, credential: RevealedCredential): void {
    if (this.#closed) return;
    const bucket = Math.floor(audit.at.getTime() / this.#bucketMs) * this.#bucketMs;
    const dedupeKey = `${BYOK_REVEAL_ACTION}:${credential.id}:${new Date(bucket).toISOString()}`;
    if (this.#entries.has(dedupeKey)) return;
    if (this.#entries.size >= this.#maxEntries) {
      this.#dropped += 1;
      return;
    }
    this.#entries.set(dedupeKey, { dedupeKey, bucket, audit, credential, state: 'pending' });
  }

  /** Entries noted and not yet written. */
  get pending(): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.state !== 'written') count += 1;
    return count;
  }

  /** Writes what is pending, in one statement; a flush already running is awaited instead of overlapping it. */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#dropped > 0) {
      this.#logger.warn({ dropped: this.#dropped }, 'BYOK reveals not audited: too many distinct credentials pending this hour');
      this.#dropped = 0;
    }
    const batch = [...this.#entries.values()].filter((entry) => entry.state === 'pending');
    if (batch.length > 0) {
      for (const entry of batch) entry.state = 'writing';
      try {
        await this.#db.$executeRaw`
          INSERT INTO audit_log (id, organization_id, actor_kind, actor_key_hash, actor_label, actor_user_id, action, target_type, target_id,
                                 changes, request_id, client_address, created_at, dedupe_key)
          SELECT gen_random_uuid(), r.organization, r.kind, r.key_hash, r.label, NULL, ${BYOK_REVEAL_ACTION}, 'byok_credential', r.credential,
                 r.changes, r.request_id, r.client_address, r.at, r.dedupe_key
            FROM jsonb_to_recordset(${JSON.stringify(batch.map((entry) => this.#row(entry)))}::jsonb)
                 AS r(organization text, kind text, key_hash text, label text, credential text, changes jsonb, request_id text,
                      client_address text, at timestamptz, dedupe_key text)
          ON CONFLICT (dedupe_key) DO NOTHING`;
        for (const entry of batch) entry.state = 'written';
      } catch (error) {
        for (const entry of batch) entry.state = 'pending';
        // A lost database is the health monitor's to log, once (database lost, database back):
        // not a line a tick while it is gone. The entries wait for it.
        if (!isConnectionLost(error))
          this.#logger.warn({ err: error, pending: batch.length }, 'could not write the audit entries of BYOK reveals; trying again at the next tick');
      }
    }
    // A written entry's hour has ended: nothing can deduplicate into it any more.
    const current = Math.floor(this.#now().getTime() / this.#bucketMs) * this.#bucketMs;
    for (const [key, entry] of this.#entries) if (entry.state === 'written' && entry.bucket < current) this.#entries.delete(key);
  }

  #row(entry: Entry) {
    const { audit, credential, bucket } = entry;
    return {
      organization: credential.organization_id,
      kind: audit.actor.kind,
      key_hash: audit.actor.keyHash,
      label: audit.actor.label,
      credential: credential.id,
      changes: {
        after: {
          provider: credential.provider,
          label: credential.label,
          first_revealed_at: audit.at.toISOString(),
          hour: { start: new Date(bucket).toISOString(), end: new Date(bucket + this.#bucketMs).toISOString() },
        },
      },
      request_id: audit.requestId,
      client_address: audit.clientAddress,
      at: audit.at.toISOString(),
      dedupe_key: entry.dedupeKey,
    };
  }

  /** Stops the timer and writes what is pending (once more if a write was running); notes after this are ignored. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
    if (this.pending > 0) await this.flush();
    if (this.pending > 0) this.#logger.warn({ pending: this.pending }, 'closed with audit entries of BYOK reveals not written');
  }
}
