// The reach test, derived from the router as the leak harness is: every procedure (over tRPC) and
// every raw route is called by a management key of each scope, and by an access token of the token
// exchange, and the answer must be the one the scope table gives: admitted when the key's scopes
// grant the operation's declared scope (or it is open to every key, or public), 403 otherwise
// (platform operations: 403 for every tenant key). The table in docs/scopes.md is generated from
// the same declarations and checked here. The ceiling (access/ceiling.ts) is then tried by a key of
// each scope: what it may make, and that it never makes or takes over more than it holds. The
// explicit paths of a takeover by a keys:write key follow, on the real server. One server, one
// database for the file.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_PREFIX, INTERNAL_PREFIX, SCOPES, type Scope } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { REGULAR_KEY_SCOPES } from '../src/access/ceiling.js';
import { EVERY_KEY, grants, PLATFORM_ONLY_MESSAGE, type AccessRule, type PermissionScope } from '../src/access/rules.js';
import { OAUTH_ROUTES } from '../src/modules/auth/oauth-token.route.js';
import { EXPORT_ROUTES } from '../src/modules/export/export.stream.js';
import { FILE_DOWNLOAD_ROUTES, SANDBOX_WRITER_ROUTES } from '../src/modules/files/files.streams.js';
import { UPLOAD_ROUTES } from '../src/modules/files/upload.stream.js';
import { VIDEO_CONTENT_ROUTES } from '../src/modules/videos/videos.streams.js';
import { routerProcedures, useServer } from './fixtures.js';
import { rest } from './fixtures-admin.js';
import { accessToken, AUDIENCE, identityProvider, ISSUER, type IdentityProvider } from './fixtures-identity.js';
import { ok, trpcRaw } from './fixtures-trpc.js';

const started = Date.now();
const env = useServer('Reach other');
const procedures = routerProcedures();
const RAW_ROUTES = [
  ...FILE_DOWNLOAD_ROUTES.map((r) => ({ ...r, prefix: API_PREFIX })),
  ...VIDEO_CONTENT_ROUTES.map((r) => ({ ...r, prefix: API_PREFIX })),
  ...UPLOAD_ROUTES.map((r) => ({ ...r, prefix: API_PREFIX })),
  ...OAUTH_ROUTES.map((r) => ({ ...r, prefix: API_PREFIX })),
  ...EXPORT_ROUTES.map((r) => ({ ...r, prefix: API_PREFIX })),
  ...SANDBOX_WRITER_ROUTES.map((r) => ({ ...r, prefix: INTERNAL_PREFIX })),
];

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
  ...RAW_ROUTES.map((r) => ({
    name: `${r.method.toUpperCase()} ${r.prefix}${r.path}`,
    rule: r.access,
    scope: 'scope' in r ? (r.scope as string | undefined) : undefined,
    rest: 'raw route',
  })),
];

/** The callers: a management key holding exactly one scope, for each scope, and an access token. */
type Caller = { kind: 'scope'; scope: Scope } | { kind: 'token' };
const CALLERS: Caller[] = [...SCOPES.map((scope) => ({ kind: 'scope' as const, scope })), { kind: 'token' }];
const nameOf = (c: Caller) => (c.kind === 'scope' ? c.scope : 'access token');

/**
 * The answer the scope table gives a caller: admitted, or 403. A scoped key: public operations,
 * EVERY_KEY ones, and those whose scope its scope grants. An access token (of an unscoped
 * management key, its scope `inference`): public operations and the tenant ones, but those that
 * hand out authority (keys:write: authorization codes); no management operation.
 */
function expected(op: Operation, caller: Caller): 'admitted' | 403 {
  if (op.rule === 'public') return 'admitted';
  if (op.rule === 'platform') return 403;
  if (caller.kind === 'token') return op.rule === 'tenant' && op.scope !== 'keys:write' ? 'admitted' : 403;
  if (op.scope === EVERY_KEY) return 'admitted';
  return op.scope && grants([caller.scope], op.scope as PermissionScope) ? 'admitted' : 403;
}

/** Whether a 403 is the admission's refusal (the operation's scope, the platform rule, an access token's scope). */
function admissionRefused(status: number, message: string | undefined, reason: unknown): boolean {
  if (status !== 403) return false;
  return Boolean(message?.startsWith('This key lacks the scope') || message === PLATFORM_ONLY_MESSAGE || String(reason ?? '').startsWith('an access token'));
}

let keyOf: Map<string, string>;
let idp: IdentityProvider;
let ownerHash: string;

/** A management key of the server's organization with these scopes (made by its unscoped key). */
async function scopedKey(scopes: string[], name = scopes.join(' ')): Promise<{ key: string; hash: string }> {
  const made = await ok(env.server, 'keys.create', { name: `reach ${name}`, is_management_key: true, scopes: scopes as Scope[] });
  return { key: made.key, hash: made.data.hash };
}

beforeAll(async () => {
  idp = await identityProvider();
  ownerHash = (await env.server.db.apiKey.findFirstOrThrow({ where: { organization_id: env.server.organizationId, is_management_key: true } })).hash;
  keyOf = new Map();
  for (const scope of SCOPES) keyOf.set(scope, (await scopedKey([scope])).key);
  // The token of an unscoped management key: what the token may do is its scope's, not the key's.
  const unscoped = await ok(env.server, 'keys.create', { name: 'reach unscoped', is_management_key: true });
  keyOf.set('access token', await accessToken(env.server, idp, unscoped.data.hash));
});

describe('the scope table', () => {
  it('every tenant and management operation declares its scope (or EVERY_KEY), each a scope of the enum', () => {
    const undeclared = OPERATIONS.filter((op) => (op.rule === 'tenant' || op.rule === 'management') && !op.scope).map((op) => op.name);
    expect(undeclared).toEqual([]);
    const unknown = OPERATIONS.filter((op) => op.scope && op.scope !== EVERY_KEY && !(SCOPES as readonly string[]).includes(op.scope)).map((op) => op.name);
    expect(unknown).toEqual([]);
    // EVERY_KEY is for what a key calls about itself and the catalog as a key sees it, never a management operation.
    const everyKey = OPERATIONS.filter((op) => op.scope === EVERY_KEY).map((op) => `${op.rule} ${op.name}`);
    expect(everyKey.sort()).toEqual(['tenant keys.current', 'tenant models.embeddings', 'tenant models.get', 'tenant models.userModels']);
  });

  it('a regular key holds the scopes of the tenant operations (REGULAR_KEY_SCOPES, derived from the router)', () => {
    const tenantScopes = [...new Set(OPERATIONS.filter((op) => op.rule === 'tenant' && op.scope && op.scope !== EVERY_KEY).map((op) => op.scope!))];
    // The fewest scopes that grant them all: a write stands for its read.
    const cover = tenantScopes.filter((s) => !(s.endsWith(':read') && tenantScopes.includes(`${s.slice(0, -':read'.length)}:write`))).sort();
    expect([...REGULAR_KEY_SCOPES].sort()).toEqual(cover);
  });

  it("docs/scopes.md's reach table is the router's", () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/scopes.md', import.meta.url)), 'utf8');
    const rows = OPERATIONS.filter((op) => op.rule === 'tenant' || op.rule === 'management')
      .map((op) => `| ${op.scope === EVERY_KEY ? 'every key' : `\`${op.scope}\``} | ${op.rule} | \`${op.name}\` | ${op.rest} |`)
      .sort();
    const table = doc.split('\n').filter((line) => /^\| (`[a-z]+:(read|write)`|every key) \| (tenant|management) \|/.test(line));
    expect(table, `docs/scopes.md's table, generated:\n${rows.join('\n')}`).toEqual(rows);
  });
});

describe('the reach of each scope, and of an access token', () => {
  for (const op of OPERATIONS) {
    it(`${op.name} (${op.rule}${op.scope ? `, ${op.scope}` : ''})`, async () => {
      const procedure = procedures.find((p) => p.path === op.name);
      const route = RAW_ROUTES.find((r) => `${r.method.toUpperCase()} ${r.prefix}${r.path}` === op.name);
      const seen: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      await Promise.all(
        CALLERS.map(async (caller) => {
          const key = keyOf.get(nameOf(caller))!;
          want[nameOf(caller)] = expected(op, caller);
          // No input (or an empty one): admission (401, 403) comes before the input is read.
          if (procedure) {
            const called = await trpcRaw(env.server, op.name, undefined, { key, query: procedure.type === 'query' });
            const refused = admissionRefused(called.status, called.error?.message, called.error?.data.metadata?.reason);
            seen[nameOf(caller)] = refused ? 403 : called.status === 401 || called.status >= 500 ? called.status : 'admitted';
          } else {
            const url = `${route!.prefix}${route!.path.replace(/:(\w+)/g, (_, name: string) => (name === 'jobId' ? 'job' : `reach-${name}`))}`;
            const res = await env.server.request(url, { method: route!.method.toUpperCase(), key });
            const text = await res.text();
            let body: { error?: { message?: string; metadata?: { reason?: string } } } = {};
            try {
              body = JSON.parse(text) as typeof body;
            } catch {
              // A byte stream: an admitted call.
            }
            const refused = admissionRefused(res.status, body.error?.message, body.error?.metadata?.reason);
            seen[nameOf(caller)] = refused ? 403 : res.status === 401 || res.status >= 500 ? res.status : 'admitted';
          }
        }),
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
    console.log(`scope-reach: ${OPERATIONS.length} operations x ${CALLERS.length} callers in ${Date.now() - started} ms`);
  });
});
