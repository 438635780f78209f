// The leak harness, derived from the router as the access matrix is: every read
// procedure (every tRPC query, and the reads served as mutations listed in READ_MUTATIONS) and every
// raw read route (GET: file, document and video content, the export) is called by each caller of a
// pair, with inputs derived from its input schema (a route's path parameters) and the caller's own
// world, and again with the other caller's world; no answer may carry any of the other world's data
// (its unique tag, which every name and content of it holds, or any of its ids). With its own world's
// input, each caller gets the answer its key's rights give (rules.ts, as `admits` below reads them):
// 200 where they admit the read, 403 where they do not. Pairs:
// - two organizations (their management keys);
// - two workspaces of one organization and one user (regular keys a management key made, so
//   they share its user: a regular key reads its own workspace only, whoever made it);
// - two organizations' scoped management keys, holding every read scope;
// - two organizations' management keys holding only audit:read, whose answers must carry no
//   content of their own organization either (generation prompts and completions, file and
//   document bytes): they read the audit log and what every key may, and nothing else;
// - two organizations' access tokens (the token exchange's), in three pairs: tokens acting as an
//   unscoped management key, as a scoped key (every read scope) and as a regular key;
// - a workspace's regular key and another workspace's access token of a management key: a token
//   reads its key's workspace only, as a regular key does.
// Then every write (a mutation not in READ_MUTATIONS) whose input the harness derives from the
// other caller's world, naming its records, is called by each caller of each pair: it is refused
// (403 or 404), so no caller changes the other's data.
// A new query is covered without a test of its own: its input is derived from its schema by the
// field names below. One whose input cannot be derived fails the harness until it is listed in
// UNDERIVABLE with the reason.
import { randomUUID } from 'node:crypto';
import { SAMPLE_VIDEO_URL, SCOPES, SESSION_PREFIX, type Scope } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { EVERY_KEY, grants, type AccessRule, type OperationScope, type PermissionScope } from '../../src/access/rules.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { demoCatalog, record } from '../fixtures-catalog.js';
import { fileIdOf, openContainer, putFile } from '../fixtures-files.js';
import { routerProcedures, until, useServer, type RouterProcedure } from '../fixtures.js';
import { accessToken, identityProvider } from '../fixtures-identity.js';
import { ok, trpcRaw } from '../fixtures-trpc.js';

/** What one caller owns: every id a read may name, and the tag every name and content holds. */
interface World {
  tag: string;
  /** The caller's key. */
  key: string;
  organizationId: string;
  workspaceId: string;
  keyHash: string;
  generationId: string;
  guardrailId: string;
  presetSlug: string;
  byokId: string;
  destinationId: string;
  scimMappingId: string;
  /** A SCIM sync job of the organization (D15). */
  syncJobId: string;
  containerId: string;
  fileId: string;
  documentId: string;
  videoJobId: string;
  memberUserId: string | null;
}

/** The data of a world another caller must never see: its tag and its ids (not the organization's, in the workspace pair). */
function markersOf(world: World, sameOrganization: boolean): string[] {
  const { tag, key, organizationId, workspaceId, memberUserId, ...ids } = world;
  return [
    tag,
    key,
    ...Object.values(ids),
    ...(sameOrganization ? [workspaceId] : [organizationId, workspaceId]),
    ...(memberUserId && !sameOrganization ? [memberUserId] : []),
  ].filter((v): v is string => typeof v === 'string' && v.length > 0);
}

/** The content of a world (what the content scopes guard): its generation's prompt and completion, its file's and its document's bytes. */
function contentOf(world: World): string[] {
  return ['prompt', 'completion', 'file', 'document'].map((what) => `${world.tag} ${what}`);
}

/** The world's id a field named `id` stands for, by the procedure's namespace. */
const ID_OF: Record<string, keyof World> = {
  generations: 'generationId',
  guardrails: 'guardrailId',
  byok: 'byokId',
  destinations: 'destinationId',
  scim: 'scimMappingId',
  workspaces: 'workspaceId',
  budgets: 'workspaceId',
};

/** A required input field's value, by its name (and the procedure's namespace and other fields); undefined: not derivable. */
function fieldValue(world: World, namespace: string, field: string, fields: string[]): unknown {
  switch (field) {
    case 'id':
      return ID_OF[namespace] ? world[ID_OF[namespace]] : undefined;
    case 'hash':
      return world.keyHash;
    case 'slug':
      return namespace === 'presets' ? world.presetSlug : namespace === 'models' ? 'gpt-4o' : undefined;
    case 'author':
      return namespace === 'models' ? 'openai' : undefined;
    case 'version':
      return '1';
    case 'interval':
      return 'monthly';
    case 'jobId':
      return world.videoJobId;
    case 'container_id':
      return world.containerId;
    case 'file_id':
      return fields.includes('container_id') ? world.fileId : world.documentId;
    case 'workspace_id':
    case 'workspace_ref':
      return world.workspaceId;
    case 'generation_id':
      return world.generationId;
    case 'organization_id':
      return world.organizationId;
    default:
      return undefined;
  }
}

/** Reads served as mutations (a POST with a body too large or too rich for a query string), with their input. */
const READ_MUTATIONS: Record<string, (world: World) => unknown> = {
  'analytics.query': () => ({
    metrics: ['request_count'],
    // Down to the generation: the dimensions that name rows of the caller's world.
    dimensions: ['workspace', 'api_key_id', 'user', 'generation_id'],
    granularity: 'day',
  }),
};

/** Reads whose `id` names another record than their namespace's usual one (a sync job, not a mapping). */
const ID_BY_PROCEDURE: Record<string, keyof World> = { 'scim.getSyncJob': 'syncJobId' };

/** Reads whose fields name something other than their namespace's usual record (an image model, not a chat model). */
const FIELD_OVERRIDES: Record<string, Record<string, unknown>> = {
  'models.imageEndpoints': { author: 'openai', slug: 'gpt-image-1' },
  'decider.spend': { version: 1, checks: [] },
};

/** Queries whose input the harness cannot derive, with the reason. */
const UNDERIVABLE: Record<string, string> = {
  'decider.snapshot':
    "the deciders' snapshot, in parts (an input of alternatives, one per part); platform keys only, every tenant key 403 (access matrix, packages/client/test/decider.test.ts)",
  'organizations.deletion':
    "a deletion job of the platform's, which outlives the organization it deletes and belongs to no world; platform keys only (access matrix), tested in offboarding tests",
};

type ProcedureDef = RouterProcedure;
const procedures = routerProcedures().map((p) => ({ path: p.path, def: p }));
const reads = procedures.filter((p) => p.def.type === 'query' || READ_MUTATIONS[p.path]);
const writes = procedures.filter((p) => p.def.type === 'mutation' && !READ_MUTATIONS[p.path]);
/** GET routes that read no organization's data, and why (each is tested where it is defined). */
const NOT_READS: Record<string, string> = {
  [`GET ${SESSION_PREFIX}/oidc/start`]: "a redirect to the organization's identity provider; it reads no key (test/sessions/oidc.test.ts)",
  [`GET ${SESSION_PREFIX}/oidc/callback`]: 'the provider returns the browser there: it makes a session and redirects (test/sessions/oidc.test.ts)',
};

/** The raw routes that read (GET), each with its full path: byte streams and the export. */
const rawReads = BYTE_ROUTE_MOUNTS.flatMap(({ prefix, routes }) =>
  routes.filter((r) => r.method === 'get').map((route) => ({ route, name: `GET ${prefix}${route.path}`, prefix })),
).filter((read) => !NOT_READS[read.name]);

/** The world's id a raw route's path parameter names (a file in a container, else a document). */
function rawParam(world: World, name: string, path: string): string | undefined {
  if (name === 'container_id') return world.containerId;
  if (name === 'file_id') return path.includes(':container_id') ? world.fileId : world.documentId;
  if (name === 'jobId') return world.videoJobId;
  return undefined;
}

/** A raw read's URL for a world; null when a path parameter cannot be derived. */
function rawUrl(prefix: string, path: string, world: World): string | null {
  let underived = false;
  const url = path.replace(/:(\w+)/g, (_, name: string) => {
    const value = rawParam(world, name, path);
    if (value === undefined) underived = true;
    return encodeURIComponent(value ?? '');
  });
  return underived ? null : `${prefix}${url}`;
}

/** The object schema inside optional/pipe/default wrappers, or null when the input is not an object. */
function objectShape(schema: z.ZodType | undefined): Record<string, z.ZodType> | null {
  let def = schema?._zod.def as (z.core.$ZodTypeDef & { innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType> }) | undefined;
  while (def && (def.type === 'optional' || def.type === 'pipe' || def.type === 'default' || def.type === 'nullable')) {
    def = (def.innerType ?? def.in)?._zod.def as typeof def;
  }
  return def?.type === 'object' ? def.shape! : null;
}

/** The input of a read for a world: undefined when it takes none; `null` when it cannot be derived. */
function deriveInput(path: string, def: ProcedureDef, world: World): { input: unknown } | null {
  const mutation = READ_MUTATIONS[path];
  if (mutation) return { input: mutation(world) };
  const schema = def.inputs[0];
  if (!schema || schema.safeParse(undefined).success) return { input: undefined };
  const shape = objectShape(schema);
  if (!shape) return null;
  const namespace = path.split('.')[0]!;
  const fields = Object.keys(shape);
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    if (shape[field]!.safeParse(undefined).success) continue;
    const byProcedure = field === 'id' && ID_BY_PROCEDURE[path] ? world[ID_BY_PROCEDURE[path]] : undefined;
    const value = byProcedure ?? FIELD_OVERRIDES[path]?.[field] ?? fieldValue(world, namespace, field, fields);
    if (value === undefined) return null;
    input[field] = value;
  }
  return schema.safeParse(input).success ? { input } : null;
}

const env = useServer('Leak other');

/** What a caller's key holds, as the access rules read it (rules.ts admitTenant). */
interface Holder {
  management: boolean;
  /** A management key's scopes; null: unscoped (or a regular key, which scopes do not narrow). */
  scopes: readonly Scope[] | null;
  /** An access token acting as the key: scope `inference`. */
  token: boolean;
}

/** The scopes an access token's `inference` never grants: those that hand out authority (authorization codes). */
const AUTHORITY_SCOPES: readonly string[] = ['keys:write'];

/**
 * Whether rules.ts admits this caller to an operation of `rule` needing `scope`: public ones
 * anyone; platform ones no tenant; management ones a management key (never through an access
 * token); and a scoped key only where its scopes grant the operation's (or it is open to every key).
 */
function admits(holder: Holder, rule: AccessRule | undefined, scope: OperationScope | undefined): boolean {
  if (rule === 'public') return true;
  if (rule !== 'tenant' && rule !== 'management') return false;
  if (rule === 'management' && (!holder.management || holder.token)) return false;
  if (holder.token && scope !== undefined && AUTHORITY_SCOPES.includes(scope)) return false;
  if (!holder.management || holder.scopes === null || scope === EVERY_KEY) return true;
  return scope !== undefined && grants(holder.scopes, scope as PermissionScope);
}

/**
 * What of its own world a caller's reads show (the harness is not blind to it): a management key
 * its organization's (every record), a regular key or an access token its workspace's (not the
 * management records: BYOK, destinations, SCIM), a key holding only audit:read no record of it.
 */
type Sight = 'organization' | 'workspace' | 'none';

interface Caller {
  name: string;
  world: World;
  holds: Holder;
  sight: Sight;
  /** Markers of its own world its answers must never carry: content its scopes do not reach. */
  unreadable: string[];
  /** The markers of its own world its own answers showed (the harness can see each kind of data). */
  found: Set<string>;
}
const pairs: { name: string; sameOrganization: boolean; callers: [Caller, Caller] }[] = [];

const UNSCOPED: Holder = { management: true, scopes: null, token: false };
const REGULAR: Holder = { management: false, scopes: null, token: false };
/** Every read scope: the scoped keys that read the most, so that their leaks would show. */
const READ_SCOPES = SCOPES.filter((scope) => scope.endsWith(':read'));

function caller(name: string, world: World, holds: Holder, sight: Sight, unreadable: string[] = []): Caller {
  return { name, world, holds, sight, unreadable, found: new Set() };
}

/** A world: one of each resource, in `workspaceId` of the organization of `managementKey`, named with a fresh tag. */
async function buildWorld(
  label: string,
  org: { managementKey: string; organizationId: string },
  workspaceId: string,
  caller: { key: string; hash: string } | null,
): Promise<World> {
  const { server } = env;
  const mk = { key: org.managementKey };
  const tag = `leak${label}${randomUUID().slice(0, 8)}`;
  const made = await ok(server, 'keys.create', { name: `${tag}-key`, workspace_id: workspaceId }, mk);
  const own = caller ?? { key: made.key, hash: made.data.hash };
  const generationId = await record(server, {
    id: `gen-${tag}`,
    api_key_hash: own.hash,
    usage: 0,
    content: { input: { messages: [{ role: 'user', content: `${tag} prompt` }] }, output: { completion: `${tag} completion` } },
  });
  const guardrail = await ok(server, 'guardrails.create', { name: `${tag}-guardrail`, workspace_id: workspaceId }, mk);
  await ok(server, 'guardrails.assignKeys', { id: guardrail.data.id, key_hashes: [own.hash] }, mk);
  const member = caller ? null : await ok(server, 'organization.createMember', { email: `${tag}@example.com`, first_name: tag }, mk);
  if (member) await ok(server, 'guardrails.assignMembers', { id: guardrail.data.id, member_user_ids: [member.id] }, mk);
  const presetSlug = `${tag}-preset`;
  await ok(server, 'presets.create', { slug: presetSlug, name: tag, workspace_id: workspaceId, config: { model: 'openai/gpt-4o' } }, mk);
  const byok = await ok(server, 'byok.create', { provider: 'openai', name: `${tag}-byok`, key: `sk-${tag}-0123456789abcdef`, workspace_id: workspaceId }, mk);
  const destination = await ok(
    server,
    'destinations.create',
    {
      type: 'webhook',
      name: `${tag}-destination`,
      workspace_id: workspaceId,
      config: { url: `https://${tag}.example.com/hook`, headers: { 'X-Tag': `${tag}-header-secret` } },
    },
    mk,
  );
  const mapping = await ok(server, 'scim.createGroupMapping', { workspace_id: workspaceId, scim_group_id: randomUUID(), role: 'member' }, mk);
  const syncJob = await ok(server, 'scim.createSyncJob', undefined, mk);
  // Ended before the next world asks for one: each world has a job of its own (one runs per organization at a time).
  await until(async () => ['succeeded', 'failed'].includes((await ok(server, 'scim.getSyncJob', { id: syncJob.data.id }, { ...mk, query: true })).data.status));
  await ok(server, 'budgets.set', { workspace_ref: workspaceId, interval: 'monthly', limit_usd: 100 }, mk);
  const containerId = await openContainer(server, `${tag}-session`, { workspaceId });
  const fileId = fileIdOf(`${tag}/out.txt`);
  expect((await putFile(server, containerId, fileId, Buffer.from(`${tag} file`), { organizationId: org.organizationId })).status).toBe(201);
  const docFile = fileIdOf(`${tag}/doc.txt`);
  expect((await putFile(server, containerId, docFile, Buffer.from(`${tag} document`), { organizationId: org.organizationId })).status).toBe(201);
  const document = await ok(server, 'files.promote', { container_id: containerId, file_id: docFile }, mk);
  const video = await ok(
    server,
    'videos.createJob',
    { workspace_id: workspaceId, provider: 'p', model: 'p/v', upstream_job_id: `${tag}-job`, outputs: [{ upstream_url: SAMPLE_VIDEO_URL }] },
    { key: server.platformKey },
  );
  return {
    tag,
    key: own.key,
    organizationId: org.organizationId,
    workspaceId,
    keyHash: own.hash,
    generationId,
    guardrailId: guardrail.data.id,
    presetSlug,
    byokId: byok.data.id,
    destinationId: destination.data.id,
    scimMappingId: mapping.data.id,
    syncJobId: syncJob.data.id,
    containerId,
    fileId,
    documentId: document.id,
    videoJobId: video.data.id,
    memberUserId: member?.id ?? null,
  };
}

beforeAll(async () => {
  const { server, other } = env;
  await ok(server, 'models.import', demoCatalog);
  for (const organizationId of [server.organizationId, other.organizationId])
    await ok(server, 'generations.addCredits', { organization_id: organizationId, amount: 10 });
  const mine = { managementKey: server.managementKey, organizationId: server.organizationId };
  const theirs = { managementKey: other.managementKey, organizationId: other.organizationId };
  const a = await buildWorld('a', mine, server.workspaceId, null);
  const b = await buildWorld('b', theirs, other.workspaceId, null);
  pairs.push({
    name: 'two organizations',
    sameOrganization: false,
    callers: [
      caller('organization A', { ...a, key: server.managementKey }, UNSCOPED, 'organization'),
      caller('organization B', { ...b, key: other.managementKey }, UNSCOPED, 'organization'),
    ],
  });
  // Management keys of each organization with these scopes, in its default workspace.
  const scopedOf = async (org: { managementKey: string }, workspaceId: string, scopes: readonly Scope[]) => {
    const made = await ok(
      server,
      'keys.create',
      { name: `leak ${scopes.join(' ')}`, workspace_id: workspaceId, is_management_key: true, scopes: [...scopes] },
      { key: org.managementKey },
    );
    return { key: made.key, hash: made.data.hash };
  };
  const [readerA, readerB] = [await scopedOf(mine, server.workspaceId, READ_SCOPES), await scopedOf(theirs, other.workspaceId, READ_SCOPES)];
  const readers: Holder = { management: true, scopes: READ_SCOPES, token: false };
  pairs.push({
    name: 'two organizations, keys holding every read scope',
    sameOrganization: false,
    callers: [caller('reader A', { ...a, key: readerA.key }, readers, 'organization'), caller('reader B', { ...b, key: readerB.key }, readers, 'organization')],
  });
  const auditors: Holder = { management: true, scopes: ['audit:read'], token: false };
  const [auditorA, auditorB] = [await scopedOf(mine, server.workspaceId, ['audit:read']), await scopedOf(theirs, other.workspaceId, ['audit:read'])];
  pairs.push({
    name: 'two organizations, keys holding only audit:read',
    sameOrganization: false,
    callers: [
      caller('auditor A', { ...a, key: auditorA.key }, auditors, 'none', contentOf(a)),
      caller('auditor B', { ...b, key: auditorB.key }, auditors, 'none', contentOf(b)),
    ],
  });
  // Access tokens: each acting as a key of its organization's default workspace, with a world of
  // its own there (its generation is its key's, its guardrail assigned to its key).
  const idp = await identityProvider();
  const tokenWorld = async (label: string, org: typeof mine, workspaceId: string, key: { hash: string }) => {
    const token = await accessToken(server, idp, key.hash, org.managementKey);
    return buildWorld(label, org, workspaceId, { key: token, hash: key.hash });
  };
  const unscopedOf = async (org: typeof mine, workspaceId: string) =>
    (await ok(server, 'keys.create', { name: 'leak unscoped', workspace_id: workspaceId, is_management_key: true }, { key: org.managementKey })).data;
  const regularOf = async (org: typeof mine, workspaceId: string) =>
    (await ok(server, 'keys.create', { name: 'leak regular', workspace_id: workspaceId }, { key: org.managementKey })).data;
  const tokenKinds: [string, Holder, (org: typeof mine, workspaceId: string) => Promise<{ hash: string }>][] = [
    ['an unscoped management key', { ...UNSCOPED, token: true }, unscopedOf],
    ['a key holding every read scope', { ...readers, token: true }, (org, workspaceId) => scopedOf(org, workspaceId, READ_SCOPES)],
    ['a regular key', { ...REGULAR, token: true }, regularOf],
  ];
  for (const [kind, holds, keyOf] of tokenKinds) {
    const ta = await tokenWorld('ta', mine, server.workspaceId, await keyOf(mine, server.workspaceId));
    const tb = await tokenWorld('tb', theirs, other.workspaceId, await keyOf(theirs, other.workspaceId));
    pairs.push({
      name: `two organizations, access tokens of ${kind}`,
      sameOrganization: false,
      callers: [caller(`token A (${kind})`, ta, holds, 'workspace'), caller(`token B (${kind})`, tb, holds, 'workspace')],
    });
  }
  // Two workspaces of the server's organization, with a regular key each, both made by the
  // management key (so both keys' user is its user).
  const second = await ok(server, 'workspaces.create', { slug: `leak-${randomUUID().slice(0, 8)}`, name: 'Second' });
  const keyOf = async (workspaceId: string) => {
    const created = await ok(server, 'keys.create', { name: 'leak workspace key', workspace_id: workspaceId });
    return { key: created.key, hash: created.data.hash };
  };
  const w1 = await buildWorld('w1', mine, server.workspaceId, await keyOf(server.workspaceId));
  const w2 = await buildWorld('w2', mine, second.data.id, await keyOf(second.data.id));
  pairs.push({
    name: 'two workspaces of one user',
    sameOrganization: true,
    callers: [caller('workspace 1', w1, REGULAR, 'workspace'), caller('workspace 2', w2, REGULAR, 'workspace')],
  });
  // An access token of an unscoped management key of the second workspace reads that workspace
  // only, as a regular key of it does: not the first workspace's (whose key shares its user).
  const tw = await tokenWorld('tw', mine, second.data.id, await unscopedOf(mine, second.data.id));
  pairs.push({
    name: "a workspace's regular key and another workspace's access token of a management key",
    sameOrganization: true,
    callers: [caller('workspace 1', w1, REGULAR, 'workspace'), caller('token of workspace 2', tw, { ...UNSCOPED, token: true }, 'workspace')],
  });
});

/** An answer: its status and everything it carries, as text. */
type Answer = { status: number; text: string };

/**
 * Every caller of every pair reads with its own world's input and the other's: no answer carries
 * the other world's markers, nor any marker of its own world it must not read; with its own input,
 * the status is the one its key's rights give.
 */
async function sweep(rule: AccessRule | undefined, scope: OperationScope | undefined, read: (world: World, key: string) => Promise<Answer | null>) {
  expect(pairs.length).toBe(PAIRS);
  const leaks: string[] = [];
  const wrong: string[] = [];
  for (const pair of pairs) {
    for (const [me, them] of [pair.callers, [pair.callers[1], pair.callers[0]]] as const) {
      const foreign = markersOf(them.world, pair.sameOrganization);
      for (const [inputs, world] of [
        ['own', me.world],
        ['theirs', them.world],
      ] as const) {
        const called = await read(world, me.world.key);
        if (!called) continue;
        const seen = foreign.filter((marker) => called.text.includes(marker));
        if (seen.length > 0) leaks.push(`${pair.name}: ${me.name} with ${inputs} input got ${them.name}'s ${seen.join(', ')} (status ${called.status})`);
        const unread = me.unreadable.filter((marker) => called.text.includes(marker));
        if (unread.length > 0) leaks.push(`${pair.name}: ${me.name} with ${inputs} input got its own content ${unread.join(', ')} (status ${called.status})`);
        if (inputs !== 'own') continue;
        for (const marker of markersOf(me.world, pair.sameOrganization)) if (called.text.includes(marker)) me.found.add(marker);
        // With its own world's input: an admitted caller is answered (the derived input is a real
        // one), and a refused one gets 403.
        const want = admits(me.holds, rule, scope) ? 200 : 403;
        if (called.status !== want) wrong.push(`${pair.name}: ${me.name} got ${called.status}, not ${want}: ${called.text.slice(0, 200)}`);
      }
    }
  }
  expect(leaks).toEqual([]);
  expect(wrong).toEqual([]);
}

/** The pairs beforeAll makes: a sweep that finds fewer ran before it. */
const PAIRS = 8;

describe('the leak harness', () => {
  it('derives an input for every read, or lists why not', () => {
    const world = pairs[0]!.callers[0].world;
    const underived = reads.filter((p) => !UNDERIVABLE[p.path] && deriveInput(p.path, p.def, world) === null).map((p) => p.path);
    expect(underived, 'reads whose input the harness cannot derive: teach fieldValue/ID_OF the field, or list them in UNDERIVABLE with the reason').toEqual([]);
    expect(Object.keys(UNDERIVABLE).filter((path) => !reads.some((p) => p.path === path))).toEqual([]);
    expect(Object.keys(READ_MUTATIONS).filter((path) => !procedures.some((p) => p.path === path && p.def.type === 'mutation'))).toEqual([]);
  });

  it('derives the URL of every raw read', () => {
    const world = pairs[0]!.callers[0].world;
    expect(rawReads.filter((r) => rawUrl(r.prefix, r.route.path, world) === null).map((r) => r.name)).toEqual([]);
  });

  for (const { path, def } of reads.filter((p) => !UNDERIVABLE[p.path])) {
    it(`${path} (${def.meta?.access}) answers no caller with the other's data`, async () => {
      await sweep(def.meta?.access, def.meta?.scope, async (world, key) => {
        const called = await trpcRaw(env.server, path, deriveInput(path, def, world)!.input, { key, query: def.type === 'query' });
        return { status: called.status, text: JSON.stringify(called.data ?? called.error ?? null) };
      });
    });
  }

  for (const { route, name, prefix } of rawReads) {
    const scope = 'scope' in route ? (route.scope as OperationScope | undefined) : undefined;
    it(`${name} (${route.access}) answers no caller with the other's data`, async () => {
      await sweep(route.access, scope, async (world, key) => {
        const res = await env.server.request(rawUrl(prefix, route.path, world)!, { key });
        return { status: res.status, text: await res.text() };
      });
    });
  }

  // After every read (tests run in order): the harness is not blind. Each caller's own answers showed every kind
  // of its world's data that its key may read, so the same data of the other world would be seen.
  it("each caller's own answers showed every kind of its own data", () => {
    const missing: string[] = [];
    for (const pair of pairs) {
      for (const me of pair.callers.filter((c) => c.sight !== 'none')) {
        const { key, byokId, destinationId, scimMappingId, syncJobId, ...readable } = me.world;
        const wanted =
          me.sight === 'workspace'
            ? { ...readable, byokId: '', destinationId: '', scimMappingId: '', syncJobId: '' }
            : { ...readable, byokId, destinationId, scimMappingId, syncJobId };
        for (const [kind, marker] of Object.entries(wanted)) {
          if (typeof marker === 'string' && marker && markersOf(me.world, pair.sameOrganization).includes(marker) && !me.found.has(marker)) {
            missing.push(`${pair.name}: ${me.name} never saw its own ${kind}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  // After the reads (a write let through would change what they see).
  it("no caller changes the other's data: every write naming it is refused", async () => {
    const changed: string[] = [];
    const tried = new Set<string>();
    for (const pair of pairs) {
      for (const [me, them] of [pair.callers, [pair.callers[1], pair.callers[0]]] as const) {
        const foreign = markersOf(them.world, pair.sameOrganization);
        for (const { path, def } of writes) {
          const derived = deriveInput(path, def, them.world);
          // Writes whose input names nothing of the other world act on the caller's own. A preset's
          // slug is a name within an organization, not a reference: a write naming the other's slug
          // makes or changes the caller's own preset of that name.
          const named = JSON.stringify(derived?.input ?? null).replaceAll(them.world.presetSlug, '');
          if (!derived || !foreign.some((marker) => named.includes(marker))) continue;
          tried.add(path);
          const called = await trpcRaw(env.server, path, derived.input, { key: me.world.key });
          if (called.status !== 403 && called.status !== 404) {
            changed.push(
              `${pair.name}: ${me.name} called ${path} on ${them.name}'s data: ${called.status} ${JSON.stringify(called.data ?? called.error).slice(0, 200)}`,
            );
          }
        }
      }
    }
    expect(changed).toEqual([]);
    console.log(`leak harness: ${tried.size} writes tried on the other's data: ${[...tried].sort().join(', ')}`);
    expect(tried.size).toBeGreaterThan(0);
  });
});
