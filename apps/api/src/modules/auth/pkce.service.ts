// Keys issued through the authorization-code flow with PKCE (platform-api.md D10, D11; RFC 7636).
// Creating a code is the user's approval: the code is issued on behalf of the user who owns the
// calling key, for the application its callback URL names. The application then exchanges the code
// (with the verifier, when the code carries a challenge) for a key, once, within CODE_TTL_MS; the
// code is the credential of that exchange, so it is stored only as a hash, as keys are.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { orderedValues, Prisma, rawRows, type Db } from '@switchyard/db';
import { z } from 'zod';
import {
  PKCE_VALUE,
  type AuthorizationCode,
  type CreateAuthorizationCodeInput,
  type ExchangeAuthorizationCodeInput,
  type ExchangedKey,
} from '@switchyard/schema';
import type { Actor, AnonymousCaller } from '../../access/callers.js';
import { assertMayMakeKey, wantedKey } from '../../access/ceiling.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { assertWorkspaceAccess, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { Conflict, Forbidden, Invalid } from '../../lib/errors.js';
import { generateApiKey, hashApiKey } from '../../access/key-format.js';
import { appendAudit, auditOfAnonymous, auditOfTenant } from '../audit/audit.js';
import { createKeyQuery, usageOf } from '../keys/keys-queries.js';
import { limitRemainingOf } from '../keys/keys-rows.js';

/** How long a code can be exchanged (platform-api.md 2.3: short-lived, 10 minutes). */
export const CODE_TTL_MS = 10 * 60_000;

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** 403 with why in error.metadata.reason (the message is the spec's text for 403). */
const denied = (reason: string) => new Forbidden(reason, undefined, { reason });

/** 400 naming the parameter refused, and why. */
const refused = (parameter: string, reason: string) => new Invalid(`${parameter}: ${reason}`, { parameter, reason });

/** The hosts an http callback may name, as written (the spec's "localhost or 127.0.0.1"). */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * The host of an http URL as written, before the URL parser rewrites it: WHATWG URLs turn `127.1`,
 * `0x7f000001` and `2130706433` into `127.0.0.1`, which the spec does not allow.
 */
function writtenHost(callbackUrl: string): string | null {
  const authority = /^http:\/\/([^/?#\\]*)/i.exec(callbackUrl.trim())?.[1];
  if (authority === undefined) return null;
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  return (host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:[0-9]*$/, '')).toLowerCase();
}

/** The application a callback URL names: its origin. https, or http on localhost or 127.0.0.1 (local tools); anything else is 400. */
function applicationOf(callbackUrl: string): { origin: string; name: string } {
  let url: URL;
  try {
    url = new URL(callbackUrl);
  } catch {
    throw refused('callback_url', 'callback_url is not a URL');
  }
  if (url.protocol === 'http:') {
    const host = writtenHost(callbackUrl);
    if (host === null || !LOCAL_HOSTS.has(host)) {
      throw refused('callback_url', `an http callback_url must name localhost or 127.0.0.1 as written (not ${host ?? url.hostname}); use https otherwise`);
    }
  } else if (url.protocol !== 'https:') {
    throw refused('callback_url', 'callback_url must be an https URL, or http on localhost or 127.0.0.1');
  }
  if (url.username || url.password) throw refused('callback_url', 'callback_url must not carry credentials');
  return { origin: url.origin, name: url.host };
}

/** Whether the organization requires an S256 code_challenge of every code (organization_settings.pkce_require_s256). */
async function requiresS256(db: Db, tenant: { organizationId: string }): Promise<boolean> {
  const row = await db.organizationSettings.findUnique({ where: tenantWhere(tenant), select: { pkce_require_s256: true } });
  return row?.pkce_require_s256 ?? false;
}

/**
 * The limit the new key may have. A key with a limit cannot give more than it has left: the new
 * key's limit is at most its remaining limit (by default exactly that), and never resets (a reset
 * would hand out the amount again every period). Management keys and unlimited keys give any limit.
 */
async function grantedLimit(
  db: Db,
  actor: Actor,
  input: CreateAuthorizationCodeInput,
  now: Date,
): Promise<{ limit: number | null; reset: typeof input.usage_limit_type | null }> {
  const asked = { limit: input.limit ?? null, reset: input.usage_limit_type ?? null };
  if (actor.key.is_management_key || actor.key.limit === null) return asked;
  const usage = await usageOf(db, actor.key.id, now);
  const remaining = usage ? limitRemainingOf(actor.key, usage) : null;
  if (remaining === null) return asked;
  if (asked.limit !== null && asked.limit > remaining) {
    throw denied(`limit ${asked.limit} is more than the calling key has left (${remaining} USD)`);
  }
  if (asked.reset !== null) throw denied('a key with a limit cannot grant a limit that resets (usage_limit_type)');
  return { limit: asked.limit ?? remaining, reset: null };
}

/**
 * POST /auth/keys/code (D10): a code for a key in the caller's workspace (a management key may name
 * another of its organization's). 409 while the same user holds an unexpired, unused code for the
 * same application and challenge.
 */
export async function createAuthorizationCode(deps: Uses<'db' | Audited>, actor: Actor, input: CreateAuthorizationCodeInput): Promise<AuthorizationCode> {
  const { db } = deps;
  // The key a code hands out is minted by the calling key and ends with it: a person's session of
  // the identity provider has no key to mint it (keys.create makes a key for them instead).
  if (actor.session?.method === 'oidc') {
    const reason = 'a session of the identity provider has no key to mint one through a code: use keys.create';
    throw new Forbidden(reason, undefined, { reason });
  }
  // A code hands out a regular key: the caller must hold what a regular key holds (the ceiling).
  assertMayMakeKey(actor, wantedKey(false, null));
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const app = applicationOf(input.callback_url);
  if (input.code_challenge_method && !input.code_challenge) {
    throw refused('code_challenge_method', 'code_challenge_method without a code_challenge');
  }
  const method = input.code_challenge ? (input.code_challenge_method ?? 'plain') : null;
  if (method !== 'S256' && (await requiresS256(db, actor))) {
    throw refused(
      'code_challenge',
      method === null
        ? 'the organization requires PKCE with S256 (its pkce_require_s256 setting): a code_challenge is required'
        : `the organization requires PKCE with S256 (its pkce_require_s256 setting): code_challenge_method ${method} is refused`,
    );
  }
  if (method === 'S256' && !/^[A-Za-z0-9_-]{43}$/.test(input.code_challenge!)) {
    throw refused('code_challenge', 'an S256 code_challenge is 43 base64url characters (the SHA-256 of the verifier, without padding)');
  }
  if (input.expires_at && new Date(input.expires_at).getTime() <= now.getTime()) {
    throw refused('expires_at', 'expires_at is not in the future');
  }
  const workspace = input.workspace_id === undefined ? { id: actor.workspaceId } : await resolveWorkspace(db, actor, input.workspace_id);
  assertWorkspaceAccess(actor, workspace.id);
  const granted = await grantedLimit(db, actor, input, now);

  const code = randomBytes(32).toString('base64url');
  const created = await db.$transaction(async (tx) => {
    const application = await tx.oAuthApp.upsert({
      where: { organization_id_origin: { ...tenantWhere(actor), origin: app.origin } },
      create: { ...tenantData(actor), origin: app.origin, name: app.name },
      update: {},
    });
    // One code at a time per user, application and challenge: concurrent calls queue here.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`auth-code ${actor.userId} ${application.id}`}, 0))`;
    const pending = await tx.authorizationCode.findFirst({
      where: {
        ...tenantWhere(actor),
        user_id: actor.userId,
        app_id: application.id,
        code_challenge: input.code_challenge ?? null,
        used_at: null,
        expires_at: { gt: now },
      },
      select: { id: true },
    });
    if (pending) throw new Conflict('an unused code for this application and challenge is still pending', { reason: 'code pending' });
    // The code is a credential: the entry names its application, never the code.
    await appendAudit(tx, audit, {
      action: 'auth.createCode',
      targetType: 'oauth_app',
      targetId: String(application.id),
      changes: { after: { callback_url: input.callback_url, key_name: input.key_label ?? app.name, workspace_id: workspace.id } },
    });
    return tx.authorizationCode.create({
      data: {
        ...tenantData(actor),
        workspace_id: workspace.id,
        app_id: application.id,
        code_hash: sha256Hex(code),
        user_id: actor.userId,
        creator_key_hash: actor.key.hash,
        callback_url: input.callback_url,
        code_challenge: input.code_challenge ?? null,
        code_challenge_method: method,
        key_name: input.key_label ?? app.name,
        limit: granted.limit,
        limit_reset: granted.reset,
        key_expires_at: input.expires_at ? new Date(input.expires_at) : null,
        created_at: now,
        expires_at: new Date(now.getTime() + CODE_TTL_MS),
      },
      select: { app_id: true, created_at: true },
    });
  });
  return { id: code, app_id: created.app_id, created_at: created.created_at.toISOString() };
}

const CODE_REFUSED = 'unknown, used or expired code';

/** The maker's standing, as D11 reads it again under its row lock. */
const MAKER_ROW = z.object({ disabled: z.boolean(), deleted_at: z.date().nullable(), expires_at: z.date().nullable() });

/** Whether the verifier answers the challenge (RFC 7636 §4.6), compared in constant time. */
function verifies(method: string, challenge: string, verifier: string): boolean {
  const made = method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  const a = Buffer.from(made);
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * POST /auth/keys (D11): the code, once, for the key it describes. No key is needed (the code and
 * verifier are the credential). 400: an unknown, used or expired code, or a missing or malformed
 * verifier; 403: a verifier that does not answer the challenge, or a code whose maker can no longer
 * act (its key or organization disabled, deleted or expired since). Two concurrent exchanges of one
 * code make one key: the claim and the key are written in one transaction, and the second claim
 * finds the code used. Its audit entry names the code's organization and user (auditOfAnonymous).
 */
export async function exchangeAuthorizationCode(
  deps: Uses<'db' | Audited>,
  _actor: AnonymousCaller,
  input: ExchangeAuthorizationCodeInput,
): Promise<ExchangedKey> {
  const { db } = deps;
  const now = deps.now();
  const row = await db.authorizationCode.findUnique({ where: { code_hash: sha256Hex(input.code) } });
  if (!row || row.used_at || row.expires_at.getTime() <= now.getTime()) throw refused('code', CODE_REFUSED);
  if (row.code_challenge_method !== 'S256' && (await requiresS256(db, { organizationId: row.organization_id }))) {
    throw refused('code', 'the organization requires PKCE with S256 (its pkce_require_s256 setting), and this code was made without it');
  }
  if (row.code_challenge && row.code_challenge_method) {
    if (input.code_challenge_method && input.code_challenge_method !== row.code_challenge_method) {
      throw refused('code_challenge_method', `the code was made with code_challenge_method ${row.code_challenge_method}`);
    }
    if (!input.code_verifier) throw refused('code_verifier', 'code_verifier is required: the code was made with a code_challenge');
    if (!PKCE_VALUE.test(input.code_verifier)) throw refused('code_verifier', 'code_verifier: 43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)');
    if (!verifies(row.code_challenge_method, row.code_challenge, input.code_verifier)) throw denied('the code_verifier does not answer the code_challenge');
  }
  const tenant = { organizationId: row.organization_id };
  const maker = await db.apiKey.findFirst({
    where: { ...tenantWhere(tenant), hash: row.creator_key_hash },
    include: { organization: { select: { disabled_at: true } } },
  });
  const makerEnded = (m: { disabled: boolean; deleted_at: Date | null; expires_at: Date | null }) =>
    m.disabled || m.deleted_at !== null || (m.expires_at !== null && m.expires_at <= now);
  if (!maker || makerEnded(maker) || maker.organization.disabled_at) {
    throw denied('the key that made the code is disabled, deleted or expired, or its organization is disabled');
  }

  const secret = generateApiKey();
  await db.$transaction(async (tx) => {
    const claimed = await tx.authorizationCode.updateMany({
      where: { id: row.id, used_at: null, expires_at: { gt: now } },
      data: { used_at: now, key_hash: hashApiKey(secret) },
    });
    if (claimed.count === 0) throw refused('code', CODE_REFUSED);
    // The maker's row, held until the new key is committed: a concurrent disabling, deletion or
    // earlier expiry of the maker waits, and then reaches the new key too (api_keys_end_minted).
    const [held] = await rawRows(tx, MAKER_ROW, Prisma.sql`SELECT disabled, deleted_at, expires_at FROM api_keys WHERE id = ${maker.id}::uuid FOR SHARE`);
    if (!held || makerEnded(held)) throw denied('the key that made the code is disabled, deleted or expired');
    // A minted key never outlives its maker: its expiry is at most the maker's.
    const asked = row.key_expires_at;
    const expiresAt = held.expires_at && (!asked || held.expires_at < asked) ? held.expires_at : asked;
    const insert = createKeyQuery(
      row.organization_id,
      row.workspace_id,
      row.user_id,
      {
        name: row.key_name,
        limit: row.limit === null ? null : row.limit.toNumber(),
        limit_reset: row.limit_reset,
        expires_at: expiresAt ? expiresAt.toISOString() : null,
      },
      { id: randomUUID(), secret },
      now,
      auditOfAnonymous(row.organization_id, row.user_id, deps),
      'auth.exchangeCode',
      maker.id,
    );
    // Through Prisma's raw API, in this transaction: the values in $n order.
    const [key] = await rawRows(tx, insert.statement.row, { text: insert.statement.text, values: orderedValues(insert.statement, insert.values) });
    // The workspace was deleted since the code was made.
    if (!key) throw refused('code', "the code's workspace no longer exists");
  });
  return { key: secret, user_id: row.user_id };
}
