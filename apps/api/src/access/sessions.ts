// People's sessions (docs/sessions.md): how a session cookie becomes a caller. A session is a row
// of `sessions`, found by its token's SHA-256 (the token is only in the browser's HttpOnly cookie).
// Every replica reads the row on each request, so a sign-out, everywhere or here, holds at once
// on all of them. A key-made session acts as its key through the key path's own cache (KeyCache,
// with its cache events), so it ends as soon as the key is disabled, deleted, expired or rotated,
// on every replica as soon as the key's announcement arrives; it holds exactly the key's scopes
// (rules.ts and ceiling.ts read `actor.key`). A session of the organization's identity provider
// (method oidc) will become an actor through the same ceiling, from its person's role.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { SESSION_COOKIE, CSRF_HEADER } from '@switchyard/schema';
import { queryRows, statement, type Db } from '@switchyard/db';
import { z } from 'zod';
import { Forbidden, Unauthorized } from '../lib/errors.js';
import { authenticate, type Actor, type KeyCache } from './callers.js';
import { personActorKey, type PersonRole } from './ceiling.js';
import { hashApiKey } from './key-format.js';

/** A session's lifetimes (SESSION_IDLE_TIMEOUT_MS, SESSION_MAX_AGE_MS). */
export interface SessionLifetimes {
  idleMs: number;
  maxAgeMs: number;
}

/** What a session is, as its caller carries it. */
export interface SessionRef {
  id: string;
  method: 'key' | 'oidc';
  /** An identity provider's session: its person's organization role, as of this request. */
  role?: PersonRole;
  createdAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  /** Its token's CSRF token (csrfTokenOf), for the call that asks who it is. */
  csrfToken: string;
}

/** A new session token: 32 random bytes, base64url (the cookie's value). */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a token: its SHA-256, as a key's secret is stored. */
export const sessionTokenHash = hashApiKey;

/**
 * A session's CSRF token, derived from its token (an HMAC keyed by it): nothing more to store, the
 * server recomputes it on each call, and knowing it tells nothing of the token.
 */
export function csrfTokenOf(token: string): string {
  return createHmac('sha256', token).update('switchyard csrf').digest('base64url');
}

const COOKIE_PAIR = /(?:^|;)\s*([^=;\s]+)\s*=\s*([^;]*)/g;

/** The session token of a request's Cookie header (null: none, or not shaped as one). */
export function sessionTokenOf(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const [, name, value] of header.matchAll(COOKIE_PAIR)) {
    if (name === SESSION_COOKIE && value && /^[A-Za-z0-9_-]{43}$/.test(value.trim())) return value.trim();
  }
  return null;
}

/** The CSRF header of a request (the first, if sent twice). */
export function csrfHeaderOf(headers: IncomingHttpHeaders): string | null {
  const value = headers[CSRF_HEADER];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

const SESSION_BY_TOKEN = statement(
  `
  SELECT s.id::text AS id, s.organization_id, s.user_id, s.method::text AS method, s.key_secret_hash, s.api_key_id::text AS api_key_id,
         s.created_at, s.last_seen_at, s.idle_expires_at, s.expires_at, s.ended_at,
         m.role::text AS member_role, COALESCE(u.active, true) AS member_active,
         o.disabled_at IS NOT NULL AS organization_disabled, o.default_workspace_id::text AS default_workspace_id
  FROM sessions s
  JOIN organizations o ON o.id = s.organization_id
  LEFT JOIN organization_members m ON m.organization_id = s.organization_id AND m.user_id = s.user_id
  LEFT JOIN scim_users u ON u.organization_id = s.organization_id AND u.user_id = s.user_id
  WHERE s.token_hash = $1`,
  z.object({
    id: z.string(),
    organization_id: z.string(),
    user_id: z.string(),
    method: z.enum(['key', 'oidc']),
    key_secret_hash: z.string().nullable(),
    api_key_id: z.string().nullable(),
    created_at: z.date(),
    last_seen_at: z.date(),
    idle_expires_at: z.date(),
    expires_at: z.date(),
    ended_at: z.date().nullable(),
    member_role: z.enum(['org:admin', 'org:member']).nullable(),
    member_active: z.boolean(),
    organization_disabled: z.boolean(),
    default_workspace_id: z.string().nullable(),
  }),
);

/** The session's use is written at most this often (a fraction of the idle timeout, at most a minute): its idle end moves by as much. */
export function touchEveryMs(lifetimes: SessionLifetimes): number {
  return Math.min(60_000, Math.floor(lifetimes.idleMs / 10));
}

/**
 * The caller of a session token: 401 unless the session exists, has not ended, is within its idle
 * and absolute ends, and (made from a key) its key authenticates as it did at sign-in: the same
 * key, still its current secret (a rotation ends the session, grace period or not), enabled,
 * undeleted, unexpired, its organization enabled. A use moves the idle end forward (written at
 * most every touchEveryMs). A state-changing call then asks assertCsrf.
 */
export async function authenticateSession(deps: { db: Db; keys: KeyCache; lifetimes: SessionLifetimes }, token: string, now: Date): Promise<Actor> {
  const { db, keys, lifetimes } = deps;
  const [row] = await queryRows(db, SESSION_BY_TOKEN, [sessionTokenHash(token)]);
  if (!row) throw new Unauthorized('unknown session');
  if (row.ended_at) throw new Unauthorized('session signed out');
  const at = now.getTime();
  if (row.expires_at.getTime() <= at) throw new Unauthorized('session past its absolute end');
  if (row.idle_expires_at.getTime() <= at) throw new Unauthorized('session idle too long');
  if (row.method === 'oidc') return personCaller(db, lifetimes, row, token, now);
  if (!row.key_secret_hash) throw new Unauthorized('a key-made session without its key');
  // The key path's own checks and cache: what ends the key ends the session.
  const caller = await authenticate(db, keys, row.key_secret_hash, now).catch((error: unknown) => {
    throw error instanceof Unauthorized ? new Unauthorized(`the session's key: ${error.message}`) : error;
  });
  const found = await keys.find(db, row.key_secret_hash);
  if (caller.kind !== 'tenant' || found?.kind !== 'tenant' || caller.key.id !== row.api_key_id || caller.organizationId !== row.organization_id) {
    throw new Unauthorized("the session's key is not the key it was signed in with");
  }
  if (found.secretExpiresAt !== null) throw new Unauthorized("the session's key was rotated");
  if (!caller.key.is_management_key) throw new Unauthorized("the session's key is no management key");
  const idleExpiresAt = await touched(db, lifetimes, row, now);
  return {
    ...caller,
    userId: row.user_id,
    via: 'session',
    session: { id: row.id, method: row.method, createdAt: row.created_at, idleExpiresAt, expiresAt: row.expires_at, csrfToken: csrfTokenOf(token) },
  };
}

type SessionRow = z.infer<typeof SESSION_BY_TOKEN.row>;

/** Moves a session's idle end forward, written at most every touchEveryMs; answers the idle end. */
async function touched(db: Db, lifetimes: SessionLifetimes, row: SessionRow, now: Date): Promise<Date> {
  const at = now.getTime();
  if (at - row.last_seen_at.getTime() < touchEveryMs(lifetimes)) return row.idle_expires_at;
  const idleExpiresAt = new Date(Math.min(at + lifetimes.idleMs, row.expires_at.getTime()));
  await db.$executeRaw`UPDATE sessions SET last_seen_at = ${now}, idle_expires_at = ${idleExpiresAt} WHERE id = ${row.id}::uuid AND ended_at IS NULL`;
  return idleExpiresAt;
}

/**
 * The caller of an identity provider's session: its person, while still a member of the session's
 * organization (not removed, not deactivated through SCIM) and the organization enabled, with the
 * authority of the member's role as of this request (ceiling.ts: personActorKey).
 */
async function personCaller(db: Db, lifetimes: SessionLifetimes, row: SessionRow, token: string, now: Date): Promise<Actor> {
  if (row.organization_disabled) throw new Unauthorized("the session's organization is disabled");
  if (!row.member_role || !row.member_active) throw new Unauthorized("the session's person is no longer a member of the organization");
  if (!row.default_workspace_id) throw new Unauthorized("the session's organization has no default workspace");
  const idleExpiresAt = await touched(db, lifetimes, row, now);
  const role = row.member_role;
  return {
    kind: 'tenant',
    key: personActorKey(role, {
      sessionId: row.id,
      organizationId: row.organization_id,
      workspaceId: row.default_workspace_id,
      userId: row.user_id,
      createdAt: row.created_at,
    }),
    organizationId: row.organization_id,
    workspaceId: row.default_workspace_id,
    userId: row.user_id,
    via: 'session',
    session: { id: row.id, method: 'oidc', role, createdAt: row.created_at, idleExpiresAt, expiresAt: row.expires_at, csrfToken: csrfTokenOf(token) },
  };
}

/** 403 unless a state-changing call made with a session carries its CSRF token (X-CSRF-Token). */
export function assertCsrf(session: SessionRef, csrfHeader: string | null): void {
  if (sameToken(csrfHeader, session.csrfToken)) return;
  const reason = csrfHeader ? 'the X-CSRF-Token header does not match the session' : 'a state-changing call made with a session needs the X-CSRF-Token header';
  throw new Forbidden(reason, undefined, { reason });
}

function sameToken(sent: string | null, expected: string): boolean {
  if (sent === null) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
