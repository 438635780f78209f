// Presets and their versions. GET /presets/{slug}/versions lists versions in ascending order; a
// deleted version keeps its place as null, so version N is always at position N - 1 of the full list.
import { Prisma, type Db, type Preset as PresetRow, type PresetVersion as VersionRow } from '@switchyard/db';
import type {
  CreatePresetInput,
  CreatePresetVersionInput,
  DeletePresetVersionInput,
  ListPresetVersionsInput,
  Preset,
  PresetVersion,
} from '@switchyard/schema';
import { isUniqueViolation } from '../../db-errors.js';
import { Invalid, NotFound } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
import { canSeeWorkspace, resolveWorkspaceOrOwn } from '../../access/workspaces.js';

type Reader = Db | Prisma.TransactionClient;

function presetOf(row: PresetRow): Preset {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies Preset;
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
  const row = await db.preset.findUnique({ where: { organization_id_slug: { organization_id: actor.organizationId, slug } } });
  if (!row || !canSeeWorkspace(actor, row.workspace_id)) throw new NotFound(`preset ${slug}`);
  return row;
}

export async function listPresetVersions(db: Db, actor: Actor, input: ListPresetVersionsInput) {
  const preset = await findPreset(db, actor, input.slug);
  const where = { preset_id: preset.id };
  const [rows, total] = await Promise.all([
    db.presetVersion.findMany({ where, orderBy: { version: 'asc' }, skip: input.offset, take: input.limit }),
    db.presetVersion.count({ where }),
  ]);
  return { data: rows.map(versionOf), total_count: total };
}

export async function createPreset(db: Db, actor: Actor, input: CreatePresetInput) {
  try {
    return await db.$transaction(async (tx) => {
      const workspace = await resolveWorkspaceOrOwn(tx, actor, input.workspace_id);
      const preset = await tx.preset.create({
        data: { organization_id: actor.organizationId, workspace_id: workspace.id, slug: input.slug, name: input.name },
      });
      const version = await tx.presetVersion.create({
        data: {
          organization_id: actor.organizationId,
          preset_id: preset.id,
          version: 1,
          config: input.config as Prisma.InputJsonObject,
          system_prompt: input.system_prompt ?? null,
          creator_id: actor.userId,
        },
      });
      return { data: presetOf(preset), version: versionOf(version)! };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new Invalid(`preset slug ${input.slug} is taken`, { reason: 'slug taken', slug: input.slug });
    throw error;
  }
}

/** The next version number, under a lock on the preset row so concurrent calls number in turn. */
export async function createPresetVersion(db: Db, actor: Actor, input: CreatePresetVersionInput) {
  return db.$transaction(async (tx) => {
    const preset = await findPreset(tx, actor, input.slug);
    await tx.$executeRaw`SELECT 1 FROM presets WHERE id = ${preset.id}::uuid FOR UPDATE`;
    const last = await tx.presetVersion.aggregate({ where: { preset_id: preset.id }, _max: { version: true } });
    const version = await tx.presetVersion.create({
      data: {
        organization_id: actor.organizationId,
        preset_id: preset.id,
        version: (last._max.version ?? 0) + 1,
        config: input.config as Prisma.InputJsonObject,
        system_prompt: input.system_prompt ?? null,
        creator_id: actor.userId,
      },
    });
    await tx.preset.update({ where: { id: preset.id }, data: { updated_at: version.created_at } });
    return { data: versionOf(version)! };
  });
}

export async function deletePresetVersion(db: Db, actor: Actor, input: DeletePresetVersionInput) {
  const preset = await findPreset(db, actor, input.slug);
  const { count } = await db.presetVersion.updateMany({
    where: { preset_id: preset.id, version: input.version, deleted_at: null },
    data: { deleted_at: new Date() },
  });
  if (count === 0) throw new NotFound(`version ${input.version} of preset ${input.slug}`);
  return { deleted: true as const };
}
