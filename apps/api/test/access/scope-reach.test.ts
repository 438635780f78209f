// The reach test, derived from the router as the leak harness is: every procedure is called over
// tRPC and, when it has a REST path, at that path with its method as the REST face serves it, and
// every byte route (the modules' BYTE_ROUTE_MOUNTS) at its path, by a management key of each scope
// and by access tokens of the token exchange made from an unscoped management key, a scoped one and
// a regular key. The answer must be the one the scope table gives: admitted when the caller's
// scopes grant the operation's declared scope (or it is open to every key, or public), 403
// otherwise (platform operations: 403 for every tenant key). The table in docs/scopes.md is
// generated from the same declarations and checked here. The ceiling (access/ceiling.ts) is then
// tried by a key of each scope: what it may make, and that it never makes or takes over more than
// it holds. The explicit paths of a takeover by a keys:write key follow, on the real server. One
// server, one database for the file.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_PREFIX, ERROR_MESSAGES, SCOPES, SESSION_PREFIX, type Scope } from '@switchyard/schema';
import pLimit from 'p-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import { REGULAR_KEY_SCOPES } from '../../src/access/ceiling.js';
import {
  AUTHORITY_SCOPES,
  EVERY_KEY,
  grants,
  PLATFORM_ONLY_MESSAGE,
  SCOPE_MISSING_REASON,
  UNSCOPED_ONLY_REASON,
  type AccessRule,
  type OperationScope,
  type PermissionScope,
} from '../../src/access/rules.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { routerProcedures, useServer } from '../fixtures.js';
import { rest, restRequest } from '../fixtures-admin.js';
import { accessToken, AUDIENCE, identityProvider, ISSUER, type IdentityProvider } from '../fixtures-identity.js';
import { ok, trpcRaw, trpcSubscriptionRaw } from '../fixtures-trpc.js';

const started = Date.now();
const env = useServer('Reach other');
const procedures = routerProcedures();
const BYTE_ROUTES = BYTE_ROUTE_MOUNTS.flatMap(({ prefix, routes }) => routes.map((r) => ({ ...r, prefix })));

/** Every operation with its rule and declared scope: the scope table's rows. */
interface Operation {
  name: string;
  rule: AccessRule;
  scope: string | undefined;
  rest: string;
}
const OPERATIONS: Operation[] = [
  ...procedures.map((p) => ({
    name: p.path,
    rule: p.meta!.access!,
    scope: p.meta?.scope,
    rest: p.meta?.openapi ? `\`${p.meta.openapi.method} ${API_PREFIX}${p.meta.openapi.path}\`` : 'tRPC only',
  })),
  ...BYTE_ROUTES.map((r) => ({
    name: `${r.method.toUpperCase()} ${r.prefix}${r.path}`,
    rule: r.access,
    scope: 'scope' in r ? (r.scope as string | undefined) : undefined,
    rest: 'raw route',
  })),
];

/**
 * A caller: its key (a management key or a regular one, with its scopes, none for unscoped) and
 * whether it calls with an access token of that key instead of the key itself.
 */
interface Caller {
  name: string;
  management: boolean;
  scopes: readonly Scope[];
  token: boolean;
}
/**
 * The scoped key an access token is made from: a tenant resource's read without its write, a
 * tenant write, the scope that hands out authority and a management-only one, so that the answer
 * shows both limits, the key's scopes and the token's `inference`, whichever is less.
 */
const TOKEN_KEY_SCOPES: Scope[] = ['files:read', 'presets:write', 'keys:write', 'workspaces:write'];
const CALLERS: Caller[] = [
  ...SCOPES.map((scope) => ({ name: scope, management: true, scopes: [scope], token: false })),
  { name: 'token of an unscoped management key', management: true, scopes: [], token: true },
  { name: `token of a management key scoped ${TOKEN_KEY_SCOPES.join(' ')}`, management: true, scopes: TOKEN_KEY_SCOPES, token: true },
  { name: 'token of a regular key', management: false, scopes: [], token: true },
];

/**
 * The answer the scope table gives a caller: admitted, or 403. Public operations admit everyone and
 * platform ones no tenant key. A management operation needs a management key, never through an
 * access token. An access token (scope `inference`) does not hand out authority (AUTHORITY_SCOPES:
 * authorization codes). A scoped management key, itself or through a token, needs the operation's
 * scope unless every key may call it; regular and unscoped keys are not narrowed.
 */
function expected(op: Operation, caller: Caller): 'admitted' | 403 {
  if (op.rule === 'public') return 'admitted';
  if (op.rule === 'platform') return 403;
  if (op.rule === 'management' && (!caller.management || caller.token)) return 403;
  if (caller.token && AUTHORITY_SCOPES.includes(op.scope as OperationScope)) return 403;
  if (!caller.management || caller.scopes.length === 0 || op.scope === EVERY_KEY) return 'admitted';
  return op.scope && grants(caller.scopes, op.scope as PermissionScope) ? 'admitted' : 403;
}

/** What a call answered: its status, and its error's message and metadata, if any. */
interface Answer {
  status: number;
  message?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Whether a 403 is admission's refusal (access/rules.ts): the operation's scope, the platform rule,
 * an access token's scope, or a key that is no management key (the spec's text, no reason). The
 * operation's own refusals once admitted (the ceiling, PKCE) say their reason in metadata.
 */
function admissionRefused({ message, metadata }: Answer): boolean {
  const reason = String(metadata?.reason ?? '');
  if (reason.startsWith(SCOPE_MISSING_REASON) || reason === UNSCOPED_ONLY_REASON || message === PLATFORM_ONLY_MESSAGE || reason.startsWith('an access token'))
    return true;
  return message === ERROR_MESSAGES[403] && metadata?.reason === undefined;
}

/** An answer as the scope table sees it: admission's 403 refused; 401 and 5xx as they are (no caller may get them); anything else admitted. */
function outcomeOf(answer: Answer): 'admitted' | number {
  if (answer.status === 403) return admissionRefused(answer) ? 403 : 'admitted';
  return answer.status === 401 || answer.status >= 500 ? answer.status : 'admitted';
}

/** A REST or byte route's answer: its error envelope's message and metadata, if it is one (a byte stream is not). */
async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  try {
    const { error } = JSON.parse(text) as { error?: { message?: string; metadata?: Record<string, unknown> } };
    return { status: res.status, message: error?.message, metadata: error?.metadata };
  } catch {
    return { status: res.status };
  }
}

/** Calls in flight at once, over the whole file: enough to keep the server busy, few enough not to queue on its pool. */
const inFlight = pLimit(8);

let keyOf: Map<string, string>;
let idp: IdentityProvider;
let ownerHash: string;

/** A management key of the server's organization with these scopes (made by its unscoped key). */
async function scopedKey(scopes: readonly string[], name = scopes.join(' ')): Promise<{ key: string; hash: string }> {
  const made = await ok(env.server, 'keys.create', { name: `reach ${name}`, is_management_key: true, scopes: scopes as Scope[] });
  return { key: made.key, hash: made.data.hash };
}

/** The key (or access token) a caller sends: a key of the caller's kind and scopes (made by the unscoped key), or a token of it. */
async function credentialOf(caller: Caller): Promise<string> {
  const scopes = caller.scopes.length > 0 ? { scopes: [...caller.scopes] } : {};
  const made = await ok(env.server, 'keys.create', { name: `reach ${caller.name}`, ...(caller.management ? { is_management_key: true, ...scopes } : {}) });
  return caller.token ? accessToken(env.server, idp, made.data.hash) : made.key;
}

beforeAll(async () => {
  idp = await identityProvider();
  ownerHash = (await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: env.server.organizationId, is_management_key: true } })).hash;
  keyOf = new Map();
  for (const caller of CALLERS) keyOf.set(caller.name, await credentialOf(caller));
});

describe('the scope table', () => {
  it('every tenant and management operation declares its scope (or EVERY_KEY), each a scope of the enum', () => {
    const undeclared = OPERATIONS.filter((op) => (op.rule === 'tenant' || op.rule === 'management') && !op.scope).map((op) => op.name);
    expect(undeclared).toEqual([]);
    const unknown = OPERATIONS.filter((op) => op.scope && op.scope !== EVERY_KEY && !(SCOPES as readonly string[]).includes(op.scope)).map((op) => op.name);
    expect(unknown).toEqual([]);
    // EVERY_KEY is for what a key calls about itself and the catalog as a key sees it; the one
    // management operation among them is the sign-in, which makes a session holding exactly its key.
    const everyKey = OPERATIONS.filter((op) => op.scope === EVERY_KEY).map((op) => `${op.rule} ${op.name}`);
    expect(everyKey.sort()).toEqual([
      `management POST ${SESSION_PREFIX}/sign-in`,
      'tenant keys.current',
      'tenant models.embeddings',
      'tenant models.get',
      'tenant models.userModels',
      'tenant sessions.current',
      'tenant sessions.signOut',
      'tenant sessions.signOutEverywhere',
    ]);
  });

  it('a regular key holds the scopes of the tenant operations (REGULAR_KEY_SCOPES, derived from the router)', () => {
    const tenantScopes = [...new Set(OPERATIONS.filter((op) => op.rule === 'tenant' && op.scope && op.scope !== EVERY_KEY).map((op) => op.scope!))];
    // The fewest scopes that grant them all: a write stands for its read.
    const cover = tenantScopes.filter((s) => !(s.endsWith(':read') && tenantScopes.includes(`${s.slice(0, -':read'.length)}:write`))).sort();
    expect([...REGULAR_KEY_SCOPES].sort()).toEqual(cover);
  });

  it("docs/scopes.md's reach table is the router's", () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../../docs/scopes.md', import.meta.url)), 'utf8');
    const rows = OPERATIONS.filter((op) => op.rule === 'tenant' || op.rule === 'management')
      .map((op) => `| ${op.scope === EVERY_KEY ? 'every key' : `\`${op.scope}\``} | ${op.rule} | \`${op.name}\` | ${op.rest} |`)
      .sort();
    const table = doc.split('\n').filter((line) => /^\| (`[a-z]+:(read|write)`|every key) \| (tenant|management) \|/.test(line));
    expect(table, `docs/scopes.md's table, generated:\n${rows.join('\n')}`).toEqual(rows);
  });
});

describe('the reach of each scope, and of access tokens, over tRPC, REST and the byte routes', () => {
  for (const op of OPERATIONS) {
    const procedure = procedures.find((p) => p.path === op.name);
    const route = BYTE_ROUTES.find((r) => `${r.method.toUpperCase()} ${r.prefix}${r.path}` === op.name);
    const openapi = procedure?.meta?.openapi;
    const planes = procedure ? ['trpc', ...(openapi ? ['rest'] : [])] : ['bytes'];
    it(`${op.name} (${op.rule}${op.scope ? `, ${op.scope}` : ''}) over ${planes.join(' and ')}`, async () => {
      // No input (or an empty one): admission (401, 403) comes before the input is read.
      const call: Record<string, (key: string) => Promise<Answer>> = {
        trpc: async (key) => {
          const { status, error } =
            procedure?.type === 'subscription'
              ? await trpcSubscriptionRaw(env.server, op.name, undefined, key)
              : await trpcRaw(env.server, op.name, undefined, { key, query: procedure?.type === 'query' });
          return { status, message: error?.message, metadata: error?.data.metadata };
        },
        rest: async (key) => {
          const params = Object.fromEntries([...openapi!.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, `reach-${name}`]));
          const { url, init } = restRequest(openapi!, params);
          return answerOf(await env.server.request(url, { ...init, key }));
        },
        bytes: async (key) => {
          const url = `${route!.prefix}${route!.path.replace(/:(\w+)/g, (_, name: string) => (name === 'jobId' ? 'job' : `reach-${name}`))}`;
          return answerOf(await env.server.request(url, { method: route!.method.toUpperCase(), key }));
        },
      };
      const seen: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      await Promise.all(
        planes.flatMap((plane) =>
          CALLERS.map((caller) =>
            inFlight(async () => {
              want[`${plane} ${caller.name}`] = expected(op, caller);
              seen[`${plane} ${caller.name}`] = outcomeOf(await call[plane]!(keyOf.get(caller.name)!));
            }),
          ),
        ),
      );
      expect(seen).toEqual(want);
    });
  }
});

describe('the ceiling, for a key of each scope', () => {
  for (const scope of SCOPES) {
    it(`a key holding ${scope} and keys:write makes keys within it, and nothing more`, async () => {
      const held = [...new Set([scope, 'keys:write'])];
      const actor = await scopedKey(held);
      const create = (json: Record<string, unknown>) => rest(env.server, '/keys', { method: 'POST', json: { name: `by ${scope}`, ...json }, key: actor.key });
      // Within: a management key of its own scope.
      expect((await create({ is_management_key: true, scopes: [scope] })).status).toBe(201);
      // Beyond: unscoped, every scope, a regular key (unless it holds a regular key's scopes), another scope.
      expect((await create({ is_management_key: true })).status).toBe(403);
      expect((await create({ is_management_key: true, scopes: null })).status).toBe(403);
      expect((await create({ is_management_key: true, scopes: SCOPES })).status).toBe(403);
      expect((await create({})).status).toBe(REGULAR_KEY_SCOPES.every((s) => grants(held, s)) ? 201 : 403);
      const other = SCOPES.find((s) => !grants(held, s))!;
      expect((await create({ is_management_key: true, scopes: [scope, other] })).status).toBe(403);
      // Its own scopes, the owner's key, a policy naming it.
      expect((await rest(env.server, `/keys/${actor.hash}`, { method: 'PATCH', json: { scopes: null }, key: actor.key })).status).toBe(403);
      expect((await rest(env.server, `/keys/${actor.hash}`, { method: 'PATCH', json: { scopes: [scope] }, key: actor.key })).status).toBe(403);
      expect((await rest(env.server, `/keys/${ownerHash}/rotate`, { method: 'POST', json: {}, key: actor.key })).status).toBe(403);
      expect((await rest(env.server, `/keys/${ownerHash}`, { method: 'PATCH', json: { name: 'taken' }, key: actor.key })).status).toBe(403);
      const policy = await trpcRaw(
        env.server,
        'federationPolicies.create',
        { issuer: ISSUER, audience: AUDIENCE, subject: `s-${randomUUID()}`, jwks: idp.jwks, key_hash: ownerHash },
        { key: actor.key },
      );
      expect(policy.status).toBe(403);
      // The same scope without keys:write makes nothing (unless it is keys:write).
      const alone = keyOf.get(scope)!;
      const made = await rest(env.server, '/keys', { method: 'POST', json: { name: 'alone', is_management_key: true, scopes: [scope] }, key: alone });
      expect(made.status).toBe(grants([scope], 'keys:write') ? 201 : 403);
    });
  }

  it('says its time', () => {
    const calls = procedures.filter((p) => p.meta?.openapi).length + OPERATIONS.length;
    console.log(`scope-reach: ${OPERATIONS.length} operations (${calls} with their REST paths) x ${CALLERS.length} callers in ${Date.now() - started} ms`);
  });
});
