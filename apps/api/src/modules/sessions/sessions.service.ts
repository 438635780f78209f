// People's sessions (docs/sessions.md): sign-in with a management key (the identity provider's: oidc-sign-in.ts), sign-out of this session and
// of all of a person's sessions in the organization. How a session cookie becomes a caller is
// access/sessions.ts; the answers' shape session-answer.ts; the sweep sweep.ts.
import type { Session } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { holdsEverything, isUnscoped, lackedScopes, scopesOf } from '../../access/ceiling.js';
import { csrfTokenOf, newSessionToken, sessionTokenHash, type SessionRef } from '../../access/sessions.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Uses } from '../../trpc/context.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import { answerOf } from './session-answer.js';

/**
 * Exchanges a management key (the bearer of the sign-in, `actor`, never a session or an access
 * token: the route's rule admits neither) for a new session of the key's creator, which acts as
 * the key. Answers the session and its token, for the cookie; the key is not kept anywhere.
 */
export async function signIn(
  deps: Uses<'db' | 'sessionLifetimes' | 'requestId' | 'clientAddress' | 'now'>,
  actor: Actor,
  input: { secretHash: string },
): Promise<{ token: string; session: Session }> {
  const { secretHash } = input;
  const token = newSessionToken();
  const now = deps.now();
  const { idleMs, maxAgeMs } = deps.sessionLifetimes;
  const expiresAt = new Date(now.getTime() + maxAgeMs);
  const idleExpiresAt = new Date(Math.min(now.getTime() + idleMs, expiresAt.getTime()));
  const audit = auditOfTenant(actor, deps);
  const row = await deps.db.$transaction(async (tx) => {
    const made = await tx.session.create({
      data: {
        token_hash: sessionTokenHash(token),
        ...tenantData(actor),
        user_id: actor.userId,
        method: 'key',
        api_key_id: actor.key.id,
        key_secret_hash: secretHash,
        created_at: now,
        last_seen_at: now,
        idle_expires_at: idleExpiresAt,
        expires_at: expiresAt,
      },
      select: { id: true },
    });
    await appendAudit(tx, audit, {
      action: 'sessions.signIn',
      targetType: 'session',
      targetId: made.id,
      changes: { after: { method: 'key', user_id: actor.userId, key_hash: actor.key.hash, expires_at: expiresAt.toISOString() } },
    });
    return made;
  });
  const ref: SessionRef = { id: row.id, method: 'key', createdAt: now, idleExpiresAt, expiresAt, csrfToken: csrfTokenOf(token) };
  return { token, session: answerOf(actor, ref) };
}

/** Ends the session the call was made with (none for a call made with a key: 0). */
export async function signOut(deps: Uses<'db' | 'now'>, actor: Actor): Promise<{ ended: number }> {
  if (actor.via !== 'session' || !actor.session) return { ended: 0 };
  const ended = await deps.db.$executeRaw`UPDATE sessions SET ended_at = ${deps.now()} WHERE id = ${actor.session.id}::uuid AND ended_at IS NULL`;
  return { ended };
}

/**
 * Ends every session of the caller's person in its organization, within the ceiling
 * (access/ceiling.ts): those whose key holds no scope the caller lacks, and an unscoped management
 * key's only for a caller holding everything; the person's identity-provider sessions always. A
 * session signing out everywhere ends itself too.
 */
export async function signOutEverywhere(deps: Uses<'db' | 'now'>, actor: Actor): Promise<{ ended: number }> {
  const sessions = await deps.db.session.findMany({
    where: { ...tenantWhere(actor), user_id: actor.userId, ended_at: null },
    select: { id: true, api_key: { select: { is_management_key: true, scopes: true } } },
  });
  // A session with no key is one of the identity provider: it holds the person's own role, which
  // any session of the same person may end (ending hands out nothing).
  const mayEnd = (key: { is_management_key: boolean; scopes: string[] } | null) =>
    holdsEverything(actor) || key === null || (!isUnscoped(key) && lackedScopes(actor, scopesOf(key)).length === 0);
  const within = sessions.filter((s) => mayEnd(s.api_key));
  if (within.length === 0) return { ended: 0 };
  const ended = await deps.db.$executeRaw`
    UPDATE sessions SET ended_at = ${deps.now()} WHERE id = ANY(${within.map((s) => s.id)}::uuid[]) AND ended_at IS NULL`;
  return { ended };
}
