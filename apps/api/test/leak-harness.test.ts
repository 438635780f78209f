// The leak harness (issue 43), derived from the router as the access matrix is: every read
// procedure (every tRPC query, and the reads served as mutations listed in READ_MUTATIONS) is called
// by each caller of a pair, with inputs derived from its input schema and the caller's own world,
// and again with the other caller's world; no answer may carry any of the other world's data (its
// unique tag, which every name and content of it holds, or any of its ids). Pairs:
// - two organizations (their management keys);
// - two workspaces of one organization and one user (regular keys a management key made, so
//   they share its user: issue 37's workspace rule).
// A new query is covered without a test of its own: its input is derived from its schema by the
// field names below. One whose input cannot be derived fails the harness until it is listed in
// UNDERIVABLE with the reason.
import { randomUUID } from 'node:crypto';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { AccessRule } from '../src/access/rules.js';
import { demoCatalog, record } from './fixtures-catalog.js';
import { fileIdOf, openContainer, putFile } from './fixtures-files.js';
import { routerProcedures, until, useServer, type RouterProcedure } from './fixtures.js';
import { ok, trpcRaw } from './fixtures-trpc.js';

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
};

/** Queries whose input the harness cannot derive, with the reason. */
const UNDERIVABLE: Record<string, string> = {
  'organizations.deletion':
    "a deletion job of the platform's, which outlives the organization it deletes and belongs to no world; platform keys only (access matrix), tested in offboarding tests",
};

type ProcedureDef = RouterProcedure;
const procedures = routerProcedures().map((p) => ({ path: p.path, def: p }));
const reads = procedures.filter((p) => p.def.type === 'query' || READ_MUTATIONS[p.path]);

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

interface Caller {
  name: string;
  world: World;
  /** What the caller's key may call: management keys all tenant reads, regular keys the tenant rule's. */
  allowed: (rule: AccessRule | undefined) => boolean;
  /** The markers of its own world its own answers showed (the harness can see each kind of data). */
  found: Set<string>;
}
const pairs: { name: string; sameOrganization: boolean; callers: [Caller, Caller] }[] = [];

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
  const management = (rule: AccessRule | undefined) => rule !== 'platform';
  const regular = (rule: AccessRule | undefined) => rule === 'tenant' || rule === 'public';
  const a = await buildWorld('a', mine, server.workspaceId, null);
  const b = await buildWorld('b', theirs, other.workspaceId, null);
  pairs.push({
    name: 'two organizations',
    sameOrganization: false,
    callers: [
      { name: 'organization A', world: { ...a, key: server.managementKey }, allowed: management, found: new Set() },
      { name: 'organization B', world: { ...b, key: other.managementKey }, allowed: management, found: new Set() },
    ],
  });
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
    callers: [
      { name: 'workspace 1', world: w1, allowed: regular, found: new Set() },
      { name: 'workspace 2', world: w2, allowed: regular, found: new Set() },
    ],
  });
});

describe('the leak harness', () => {
  it('derives an input for every read, or lists why not', () => {
    const world = pairs[0]!.callers[0].world;
    const underived = reads.filter((p) => !UNDERIVABLE[p.path] && deriveInput(p.path, p.def, world) === null).map((p) => p.path);
    expect(underived, 'reads whose input the harness cannot derive: teach fieldValue/ID_OF the field, or list them in UNDERIVABLE with the reason').toEqual([]);
    expect(Object.keys(UNDERIVABLE).filter((path) => !reads.some((p) => p.path === path))).toEqual([]);
    expect(Object.keys(READ_MUTATIONS).filter((path) => !procedures.some((p) => p.path === path && p.def.type === 'mutation'))).toEqual([]);
  });

  for (const { path, def } of reads.filter((p) => !UNDERIVABLE[p.path])) {
    it(`${path} (${def.meta?.access}) answers no caller with the other's data`, async () => {
      expect(pairs.length).toBe(2);
      const leaks: string[] = [];
      const refused: string[] = [];
      for (const pair of pairs) {
        for (const [me, them] of [pair.callers, [pair.callers[1], pair.callers[0]]] as const) {
          const foreign = markersOf(them.world, pair.sameOrganization);
          for (const [inputs, world] of [
            ['own', me.world],
            ['theirs', them.world],
          ] as const) {
            const derived = deriveInput(path, def, world)!;
            const called = await trpcRaw(env.server, path, derived.input, { key: me.world.key, query: def.type === 'query' });
            const text = JSON.stringify(called.data ?? called.error ?? null);
            const seen = foreign.filter((marker) => text.includes(marker));
            if (inputs === 'own') for (const marker of markersOf(me.world, pair.sameOrganization)) if (text.includes(marker)) me.found.add(marker);
            if (seen.length > 0) leaks.push(`${pair.name}: ${me.name} with ${inputs} input got ${them.name}'s ${seen.join(', ')} (status ${called.status})`);
            // With its own world's input, an allowed caller is answered: the derived input is a real one.
            if (inputs === 'own' && me.allowed(def.meta?.access) && called.status !== 200) {
              refused.push(`${pair.name}: ${me.name} got ${called.status} ${JSON.stringify(called.error?.message)}`);
            }
          }
        }
      }
      expect(leaks).toEqual([]);
      expect(refused).toEqual([]);
    });
  }

  // Last (tests run in order): the harness is not blind. Each caller's own answers showed every kind
  // of its world's data that its key may read, so the same data of the other world would be seen.
  it("each caller's own answers showed every kind of its own data", () => {
    const missing: string[] = [];
    for (const pair of pairs) {
      for (const me of pair.callers) {
        const { key, byokId, destinationId, scimMappingId, syncJobId, ...readable } = me.world;
        const wanted = pair.sameOrganization
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
});
