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
  PresetWithVersion,
} from '@switchyard/schema';
import { refuseDuplicates } from '../../db-errors.js';
import { Invalid, NotFound } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
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

export async function listPresetVersions(db: Db, actor: Actor, input: ListPresetVersionsInput) {
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
export async function listPresets(db: Db, actor: Actor, input: ListPresetsInput) {
  const where = visibleRows(actor);
  return pageOf(
    input,
    (slice) => db.preset.findMany({ where, orderBy: [{ updated_at: 'desc' }, { id: 'asc' }], ...slice }),
    () => db.preset.count({ where }),
    presetOf,
  );
}

/** The preset with the version in force (or null when it has none). */
export async function getPreset(db: Db, actor: Actor, input: GetPresetInput): Promise<PresetWithVersion> {
  const preset = await findPreset(db, actor, input.slug);
  const designated = preset.designated_version_id ? await db.presetVersion.findUnique({ where: { id: preset.designated_version_id } }) : null;
  return { ...presetOf(preset), designated_version: designated && versionDetailOf(designated) };
}

/** One version by number: null when it was deleted, 404 when the preset never had it. */
export async function getPresetVersion(db: Db, actor: Actor, input: GetPresetVersionInput) {
  const preset = await findPreset(db, actor, input.slug);
  const row = await db.presetVersion.findUnique({ where: { preset_id_version: { preset_id: preset.id, version: Number(input.version) } } });
  if (!row) throw new NotFound(`version ${input.version} of preset ${input.slug}`);
  return versionDetailOf(row);
}

export async function createPreset(db: Db, actor: Actor, input: CreatePresetInput, now: Date) {
  return refuseDuplicates(
    () =>
      db.$transaction(async (tx) => {
        const workspace = await resolveWorkspaceOrOwn(tx, actor, input.workspace_id);
        const created = await tx.preset.create({
          data: {
            ...tenantData(actor),
            workspace_id: workspace.id,
            slug: input.slug,
            name: input.name,
            creator_user_id: actor.userId,
            created_at: now,
            updated_at: now,
          },
        });
        const version = await tx.presetVersion.create({
          data: {
            ...tenantData(actor),
            preset_id: created.id,
            version: 1,
            config: input.config as Prisma.InputJsonObject,
            system_prompt: input.system_prompt ?? null,
            creator_id: actor.userId,
            created_at: now,
            updated_at: now,
          },
        });
        const preset = await tx.preset.update({ where: { id: created.id }, data: { designated_version_id: version.id, updated_at: now } });
        return { preset: presetOf(preset), version: versionOf(version)! };
      }),
    () => new Invalid(`preset slug ${input.slug} is taken`, { reason: 'slug taken', slug: input.slug }),
  );
}

/** The next version number, under a lock on the preset row so concurrent calls number in turn. */
export async function createPresetVersion(db: Db, actor: Actor, input: CreatePresetVersionInput, now: Date) {
  return db.$transaction(async (tx) => {
    const preset = await findPreset(tx, actor, input.slug);
    await tx.$executeRaw`SELECT 1 FROM presets WHERE id = ${preset.id}::uuid FOR UPDATE`;
    const last = await tx.presetVersion.aggregate({ where: { preset_id: preset.id }, _max: { version: true } });
    const version = await tx.presetVersion.create({
      data: {
        ...tenantData(actor),
        preset_id: preset.id,
        version: (last._max.version ?? 0) + 1,
        config: input.config as Prisma.InputJsonObject,
        system_prompt: input.system_prompt ?? null,
        creator_id: actor.userId,
        created_at: now,
        updated_at: now,
      },
    });
    // The newest version is the one in force.
    await tx.preset.update({ where: { id: preset.id }, data: { updated_at: version.created_at, designated_version_id: version.id } });
    return versionOf(version)!;
  });
}

/** Deletes a version; when it was the one in force, the newest remaining version (or none) takes its place. */
export async function deletePresetVersion(db: Db, actor: Actor, input: DeletePresetVersionInput, now: Date) {
  return db.$transaction(async (tx) => {
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
    return { deleted: true as const };
  });
}
