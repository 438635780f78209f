// Safe retries of creating operations (docs/idempotency.md, decision 0027).
//
// A caller sends an Idempotency-Key header (REST) or an `idempotency_key` input field (tRPC) with a
// creating operation. The first request with a key claims it (one row of `idempotency_keys`), runs,
// and keeps its answer, sealed, for 24 hours. A retry with the same key and the same request gets
// that answer and creates nothing; with another request, 400. A retry that arrives while the first
// still runs waits for its answer. A first request that fails gives its key back (its retry runs
// again); one whose process died holds the key only until its lease ends.
//
// Keys belong to the caller's key (its stable id, decision 0021), never to an organization as a
// whole: two keys, or two organizations, may use the same key for different things.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Db, namedStatement, queryRows, statement } from '@switchyard/db';
import { z } from 'zod';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { Invalid } from '../../lib/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** How long an answer is replayed. */
export const ANSWER_KEPT_MS = 24 * 60 * 60 * 1000;
/** How long a first request holds its key before a retry may take it over (its process died). */
export const CLAIM_LEASE_MS = 60_000;
/** How often a retry looks again for the answer of a first request still running. */
const WAIT_STEP_MS = 20;
/** The periodic expiry's advisory lock. */
export const IDEMPOTENCY_EXPIRY_LOCK = 0x4944_454d; // "IDEM"
/** How often a replica tries the expiry (one replica a round). */
export const IDEMPOTENCY_EXPIRY_INTERVAL_MS = 60 * 60 * 1000;

export const IDEMPOTENCY_HEADER = 'idempotency-key';

const KEY_RULE = 'Idempotency-Key must be 1 to 255 visible ASCII characters';

export const IdempotencyKeySchema = z
  .string()
  .min(1, KEY_RULE)
  .max(255, KEY_RULE)
  .regex(/^[\x21-\x7e]+$/, KEY_RULE);

/** The input field of every creating operation over tRPC (REST callers may send the header instead). */
export const IdempotencyField = {
  idempotency_key: IdempotencyKeySchema.optional().describe(
    'Makes a retry safe: the first answer is kept 24 hours and replayed for the same key and request (docs/idempotency.md). Over REST, the Idempotency-Key header does the same.',
  ),
};

/** What a resolver wrapped by idempotent() needs of its context. */
export interface IdempotencyContext {
  deps: { db: Db; secrets: SecretBox; now: () => Date };
  headers: Record<string, string | string[] | undefined>;
  actor?: Actor;
  platform?: PlatformActor;
}

type WithKey = { idempotency_key?: string | undefined };

/** Claims a key: a new row, or one free again (its answer past 24 hours, or the same request's first run never finished). */
const CLAIM = namedStatement(
  `INSERT INTO idempotency_keys AS k (owner, key, organization_id, fingerprint, response, locked_until, created_at)
   VALUES (:owner, :key, :organization, :fingerprint, NULL, :locked_until, :now)
   ON CONFLICT (owner, key) DO UPDATE
     SET organization_id = EXCLUDED.organization_id, fingerprint = EXCLUDED.fingerprint, response = NULL,
         locked_until = EXCLUDED.locked_until, created_at = EXCLUDED.created_at
     WHERE k.created_at <= :kept_since
        OR (k.response IS NULL AND k.locked_until <= :now AND k.fingerprint = EXCLUDED.fingerprint)
   RETURNING k.owner`,
  z.object({ owner: z.string() }),
);

const READ = statement(
  'SELECT fingerprint, response FROM idempotency_keys WHERE owner = $1 AND key = $2',
  z.object({ fingerprint: z.string(), response: z.string().nullable() }),
);

const KEEP = namedStatement(
  `UPDATE idempotency_keys SET response = :response, locked_until = NULL
    WHERE owner = :owner AND key = :key AND created_at = :created_at AND response IS NULL`,
);

const RELEASE = statement('DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND created_at = $3 AND response IS NULL');

const EXPIRE = statement(
  `WITH gone AS (
     DELETE FROM idempotency_keys WHERE created_at <= $1 AND (response IS NOT NULL OR locked_until <= $2) RETURNING 1
   ) SELECT count(*)::int AS n FROM gone`,
  z.object({ n: z.number() }),
);

/** JSON with every object's keys sorted: two requests that differ only in key order are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The key a request carries: the header, the input field, or both when they agree. */
function keyOf(headers: IdempotencyContext['headers'], field: string | undefined): string | undefined {
  const header = headers[IDEMPOTENCY_HEADER];
  if (header === undefined) return field;
  if (Array.isArray(header)) throw new Invalid('Idempotency-Key given more than once');
  const parsed = IdempotencyKeySchema.safeParse(header);
  if (!parsed.success) throw new Invalid(KEY_RULE);
  if (field !== undefined && field !== parsed.data) throw new Invalid('the Idempotency-Key header and idempotency_key differ');
  return parsed.data;
}

/**
 * Wraps a creating operation's resolver: with a key, its first answer is kept and replayed
 * (named `name`, the procedure's path, so that one key cannot replay another operation's answer).
 * Without one, the resolver runs as it is.
 */
export function idempotent<C extends IdempotencyContext, I extends WithKey, O>(
  name: string,
  resolve: (args: { ctx: C; input: Omit<I, 'idempotency_key'> }) => Promise<O>,
): (args: { ctx: C; input: I }) => Promise<O> {
  return async ({ ctx, input }) => {
    const { idempotency_key: field, ...rest } = input;
    const key = keyOf(ctx.headers, field);
    if (key === undefined) return resolve({ ctx, input: rest });
    const owner = ctx.actor ? `key:${ctx.actor.key.hash}` : `platform:${ctx.platform?.keyId ?? ''}`;
    const organizationId = ctx.actor?.organizationId ?? null;
    const fingerprint = createHash('sha256')
      .update(`${name}\n${canonical(rest)}`)
      .digest('hex');
    const sealedAs = `idempotency_keys:${owner}:${key}`;
    const { db, secrets } = ctx.deps;
    for (;;) {
      const now = ctx.deps.now();
      const [claimed] = await queryRows(db, CLAIM, {
        owner,
        key,
        organization: organizationId,
        fingerprint,
        now,
        locked_until: new Date(now.getTime() + CLAIM_LEASE_MS),
        kept_since: new Date(now.getTime() - ANSWER_KEPT_MS),
      });
      if (claimed) {
        let answer: O;
        try {
          answer = await resolve({ ctx, input: rest });
        } catch (error) {
          // A failed request creates nothing, so its retry runs again.
          await queryRows(db, RELEASE, [owner, key, now]);
          throw error;
        }
        await queryRows(db, KEEP, { owner, key, created_at: now, response: secrets.seal(JSON.stringify(answer), sealedAs) });
        return answer;
      }
      const [row] = await queryRows(db, READ, [owner, key]);
      // Gone between the two statements (a first request that failed): claim it again.
      if (!row) continue;
      if (row.fingerprint !== fingerprint) {
        throw new Invalid('this Idempotency-Key was used with another request (another operation or body) in the last 24 hours');
      }
      if (row.response !== null) return JSON.parse(secrets.open(row.response, sealedAs)) as O;
      // The first request still runs: its answer, or the end of its lease, comes next.
      await sleep(WAIT_STEP_MS);
    }
  };
}

/** Forgets answers past 24 hours (and claims whose lease ended with them): the expiry job's round. */
export async function expireIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const [row] = await queryRows(db, EXPIRE, [new Date(now.getTime() - ANSWER_KEPT_MS), now]);
  return row?.n ?? 0;
}
