// Presets and their versions. GET /presets/{slug}/versions lists versions in ascending order; a
// deleted version keeps its place as null, so version N is always at position N - 1 of the full list.
import type { Prisma, Db, Preset as PresetRow, PresetVersion as VersionRow } from '@switchyard/db';
import type {
  CreatePresetInput,
  CreatePresetVersionInput,
  DeletePresetVersionInput,
  GetPresetInput,
  GetPresetVersionInput,
  ListPresetsInput,
  ListPresetVersionsInput,
  Preset,
  PresetVersion,
  PresetVersionDetail,
  PresetFromChatInput,
  PresetFromMessagesInput,
  PresetFromResponsesInput,
  PresetWithVersion,
} from '@switchyard/schema';
import { PRESET_REQUEST_KEPT, SystemPromptSchema } from '@switchyard/schema';
import { refuseDuplicates } from '../../lib/db-errors.js';
import { Conflict, Invalid, NotFound } from '../../lib/errors.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import type { Actor } from '../../access/callers.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { canSeeWorkspace, resolveWorkspaceOrOwn } from '../../access/workspaces.js';
import { tenantData, tenantWhere, visibleRows } from '../../access/tenancy.js';
import { pageOf } from '../pages.js';

type Reader = Db | Prisma.TransactionClient;

function presetOf(row: PresetRow): Preset {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    status: row.status,
    status_updated_at: row.status_updated_at?.toISOString() ?? null,
    designated_version_id: row.designated_version_id,
    creator_user_id: row.creator_user_id,
    workspace_id: row.workspace_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies Preset;
}

/** A version as GET /presets/{slug} and /presets/{slug}/versions/{version} answer it (system_prompt always present). */
function versionDetailOf(row: VersionRow): PresetVersionDetail | null {
  const version = versionOf(row);
  return version && { ...version, system_prompt: row.system_prompt };
}

function versionOf(row: VersionRow): PresetVersion | null {
  if (row.deleted_at) return null;
  return {
    id: row.id,
    preset_id: row.preset_id,
    version: row.version,
    config: row.config as Record<string, unknown>,
    // Optional in the contract: absent rather than null when the version has none.
    ...(row.system_prompt !== null ? { system_prompt: row.system_prompt } : {}),
    creator_id: row.creator_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies PresetVersion;
}

/** The organization's preset with this slug; for a regular key, only one of its own workspace. */
async function findPreset(db: Reader, actor: Actor, slug: string): Promise<PresetRow> {
  const row = await db.preset.findUnique({ where: { organization_id_slug: { ...tenantWhere(actor), slug } } });
  if (!row || !canSeeWorkspace(actor, row.workspace_id)) throw new NotFound(`preset ${slug}`);
  return row;
}

export async function listPresetVersions(deps: Uses<'db'>, actor: Actor, input: ListPresetVersionsInput) {
  const { db } = deps;
  const preset = await findPreset(db, actor, input.slug);
  const where = { preset_id: preset.id };
  return pageOf(
    input,
    (slice) => db.presetVersion.findMany({ where, orderBy: { version: 'asc' }, ...slice }),
    () => db.presetVersion.count({ where }),
    versionOf,
  );
}

/** The presets the caller may see (a regular key: its own workspace's), most recently updated first. */
export async function listPresets(deps: Uses<'db'>, actor: Actor, input: ListPresetsInput) {
  const { db } = deps;
  const where = visibleRows(actor);
  return pageOf(
    input,
    (slice) => db.preset.findMany({ where, orderBy: [{ updated_at: 'desc' }, { id: 'asc' }], ...slice }),
    () => db.preset.count({ where }),
    presetOf,
  );
}

/** The preset with the version in force (or null when it has none). */
export async function getPreset(deps: Uses<'db'>, actor: Actor, input: GetPresetInput): Promise<PresetWithVersion> {
  const { db } = deps;
  const preset = await findPreset(db, actor, input.slug);
  const designated = preset.designated_version_id ? await db.presetVersion.findUnique({ where: { id: preset.designated_version_id } }) : null;
  return { ...presetOf(preset), designated_version: designated && versionDetailOf(designated) };
}

/** One version by number: null when it was deleted, 404 when the preset never had it. */
export async function getPresetVersion(deps: Uses<'db'>, actor: Actor, input: GetPresetVersionInput) {
  const { db } = deps;
  const preset = await findPreset(db, actor, input.slug);
  const row = await db.presetVersion.findUnique({ where: { preset_id_version: { preset_id: preset.id, version: Number(input.version) } } });
  if (!row) throw new NotFound(`version ${input.version} of preset ${input.slug}`);
  return versionDetailOf(row);
}

export async function createPreset(deps: Uses<'db' | Audited>, actor: Actor, input: CreatePresetInput) {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  return refuseDuplicates(
    () =>
      deps.db.$transaction(async (tx) => {
        const workspace = await resolveWorkspaceOrOwn(tx, actor, input.workspace_id);
        const created = await insertPreset(tx, actor, { workspaceId: workspace.id, slug: input.slug, name: input.name }, now);
        const { preset, version } = await addVersion(tx, actor, created.id, input, now);
        await appendAudit(tx, audit, {
          action: 'presets.create',
          targetType: 'preset',
          targetId: preset.id,
          changes: { after: { slug: input.slug, name: input.name, workspace_id: workspace.id, version: version.version } },
        });
        return { preset: presetOf(preset), version: versionOf(version)! };
      }),
    () => new Invalid(`preset slug ${input.slug} is taken`, { reason: 'slug taken', slug: input.slug }),
  );
}

/** The next version of a preset. */
export async function createPresetVersion(deps: Uses<'db' | Audited>, actor: Actor, input: CreatePresetVersionInput) {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  return deps.db.$transaction(async (tx) => {
    const preset = await findPreset(tx, actor, input.slug);
    const { version } = await addVersion(tx, actor, preset.id, input, now);
    await appendAudit(tx, audit, {
      action: 'presets.createVersion',
      targetType: 'preset',
      targetId: preset.id,
      changes: { after: { version: version.version } },
    });
    return versionOf(version)!;
  });
}

/** What a version holds. */
interface VersionContent {
  config: Record<string, unknown>;
  system_prompt?: string | null;
}

/** A new preset row (status active), with no version yet. */
function insertPreset(tx: Prisma.TransactionClient, actor: Actor, preset: { workspaceId: string; slug: string; name: string }, now: Date) {
  return tx.preset.create({
    data: {
      ...tenantData(actor),
      workspace_id: preset.workspaceId,
      slug: preset.slug,
      name: preset.name,
      creator_user_id: actor.userId,
      created_at: now,
      updated_at: now,
    },
  });
}

/**
 * The one way a version is made: numbered one above the highest (deleted ones count, so a number is
 * never reused), under a lock on the preset row so that concurrent calls number in turn, and
 * designated, since the newest version is the one in force.
 */
async function addVersion(tx: Prisma.TransactionClient, actor: Actor, presetId: string, content: VersionContent, now: Date) {
  await tx.$executeRaw`SELECT 1 FROM presets WHERE id = ${presetId}::uuid FOR UPDATE`;
  const last = await tx.presetVersion.aggregate({ where: { preset_id: presetId }, _max: { version: true } });
  const version = await tx.presetVersion.create({
    data: {
      ...tenantData(actor),
      preset_id: presetId,
      version: (last._max.version ?? 0) + 1,
      config: content.config as Prisma.InputJsonObject,
      system_prompt: content.system_prompt ?? null,
      creator_id: actor.userId,
      created_at: now,
      updated_at: now,
    },
  });
  const preset = await tx.preset.update({ where: { id: presetId }, data: { updated_at: version.created_at, designated_version_id: version.id } });
  return { preset, version };
}

/** D6–D8: the body of an inference request of one kind, as each of them takes it. */
export type PresetRequest =
  | { kind: 'chat'; body: PresetFromChatInput }
  | { kind: 'messages'; body: PresetFromMessagesInput }
  | { kind: 'responses'; body: PresetFromResponsesInput };

/**
 * What a version keeps of an inference request body: the fields of PRESET_REQUEST_KEPT for its kind,
 * under their wire names (a kept field sent as null is left out: null sets nothing), and the system
 * prompt (`system` of a messages body, its text blocks joined by a blank line; `instructions` of a
 * responses body; none for chat completions). Nothing else of the body is kept.
 */
function versionContentOf(request: PresetRequest): { config: Record<string, unknown>; system_prompt: string | null } {
  const body = request.body as Record<string, unknown>;
  const config: Record<string, unknown> = {};
  for (const field of PRESET_REQUEST_KEPT[request.kind]) {
    const value = body[field];
    if (value !== undefined && value !== null) config[field] = value;
  }
  return { config, system_prompt: systemPromptOf(request) };
}

function systemPromptOf(request: PresetRequest): string | null {
  switch (request.kind) {
    case 'chat':
      return null;
    case 'responses':
      return request.body.instructions ?? null;
    case 'messages': {
      const { system } = request.body;
      if (system === undefined) return null;
      const text = typeof system === 'string' ? system : system.map((block) => block.text).join('\n\n');
      const limit = SystemPromptSchema.maxLength ?? Number.POSITIVE_INFINITY;
      if (text.length > limit) throw new Invalid(`system prompt over ${limit} characters`, { reason: 'system prompt too long', field: 'system' });
      return text;
    }
  }
}

/**
 * D6–D8: a new version of the preset with this slug, made of an inference request body and
 * designated; a slug with no preset in the organization creates one (status active, name = slug) in
 * the caller's own workspace. Nothing is sent to any provider and no generation is recorded.
 * - 404: the slug is taken in the organization by a preset the caller cannot reach: one in another
 *   workspace (for a regular key), or one whose workspace was deleted (presets themselves cannot be
 *   deleted; a deleted workspace takes its presets with it at once, and their rows with its deletion
 *   job, after which the slug is free again).
 * - 409: a concurrent call created the same slug first (its version 1 and ours would race); nothing
 *   was written, and the same call again adds the next version.
 */
export async function presetFromRequest(deps: Uses<'db' | Audited>, actor: Actor, input: PresetRequest): Promise<PresetWithVersion> {
  const { slug } = input.body;
  const content = versionContentOf(input);
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  return refuseDuplicates(
    () =>
      deps.db.$transaction(async (tx) => {
        let target = await tx.preset.findUnique({
          where: { organization_id_slug: { ...tenantWhere(actor), slug } },
          include: { workspace: { select: { deleted_at: true } } },
        });
        if (target && (!canSeeWorkspace(actor, target.workspace_id) || target.workspace.deleted_at)) throw new NotFound(`preset ${slug}`);
        if (!target) {
          const workspace = await resolveWorkspaceOrOwn(tx, actor, undefined);
          target = { ...(await insertPreset(tx, actor, { workspaceId: workspace.id, slug, name: slug }, now)), workspace };
        }
        const { preset, version } = await addVersion(tx, actor, target.id, content, now);
        await appendAudit(tx, audit, {
          action: FROM_REQUEST_ACTIONS[input.kind],
          targetType: 'preset',
          targetId: preset.id,
          changes: { after: { slug, version: version.version } },
        });
        return { ...presetOf(preset), designated_version: versionDetailOf(version) };
      }),
    () =>
      new Conflict(`preset ${slug} was created by a concurrent call`, {
        reason: 'a concurrent call created this preset; retrying adds the next version',
        slug,
      }),
  );
}

/** The audit log's action of each kind of request a preset is made from. */
const FROM_REQUEST_ACTIONS = { chat: 'presets.fromChat', messages: 'presets.fromMessages', responses: 'presets.fromResponses' } as const;

/** Deletes a version; when it was the one in force, the newest remaining version (or none) takes its place. */
export async function deletePresetVersion(deps: Uses<'db' | Audited>, actor: Actor, input: DeletePresetVersionInput) {
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  return deps.db.$transaction(async (tx) => {
    const preset = await findPreset(tx, actor, input.slug);
    await tx.$executeRaw`SELECT 1 FROM presets WHERE id = ${preset.id}::uuid FOR UPDATE`;
    const [deleted] = await tx.presetVersion.updateManyAndReturn({
      where: { preset_id: preset.id, version: input.version, deleted_at: null },
      data: { deleted_at: now, updated_at: now },
    });
    if (!deleted) throw new NotFound(`version ${input.version} of preset ${input.slug}`);
    const current = await tx.preset.findUniqueOrThrow({ where: { id: preset.id }, select: { designated_version_id: true } });
    if (current.designated_version_id === deleted.id) {
      const newest = await tx.presetVersion.findFirst({ where: { preset_id: preset.id, deleted_at: null }, orderBy: { version: 'desc' } });
      await tx.preset.update({ where: { id: preset.id }, data: { designated_version_id: newest?.id ?? null, updated_at: now } });
    }
    await appendAudit(tx, audit, {
      action: 'presets.deleteVersion',
      targetType: 'preset',
      targetId: preset.id,
      changes: { before: { version: input.version } },
    });
    return { deleted: true as const };
  });
}
