// Guardrails of a workspace, and their bulk key and member assignments (who assigned them is
// recorded). Key assignments show the key's hash, name and masked label, never a secret.
import { Prisma, queryRows, statement, type Db, type Guardrail as GuardrailRow } from '@switchyard/db';
import type {
  CreateGuardrailInput,
  Guardrail,
  GuardrailKeyAssignment,
  GuardrailKeysInput,
  GuardrailMemberAssignment,
  GuardrailMembersInput,
  ListGuardrailAssignmentsInput,
  ListGuardrailsInput,
  UpdateGuardrailInput,
} from '@switchyard/schema';
import { Invalid, NotFound } from '../../errors.js';
import { jsonList, listOrNull } from '../../json-list.js';
import type { Actor } from '../../access/callers.js';
import { assertWorkspaceAccess, canSeeWorkspace, isUuid, resolveWorkspace, resolveWorkspaceOrOwn } from '../../access/workspaces.js';

type Reader = Db | Prisma.TransactionClient;
const ORDER = [{ created_at: 'asc' as const }, { id: 'asc' as const }];

/** A guardrail row from Prisma, or from node-postgres (which reads numeric columns as text). */
type GuardrailData = Omit<GuardrailRow, 'limit_usd'> & { limit_usd: Prisma.Decimal | string };

function guardrailOf(row: GuardrailData): Guardrail {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    description: row.description,
    allowed_models: listOrNull(row.allowed_models),
    ignored_models: listOrNull(row.ignored_models),
    allowed_providers: listOrNull(row.allowed_providers),
    ignored_providers: listOrNull(row.ignored_providers),
    enforce_zdr: row.enforce_zdr,
    limit_usd: Number(row.limit_usd),
    reset_interval: row.reset_interval,
    include_byok_in_budgets: row.include_byok_in_budgets,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies Guardrail;
}

const keyAssignmentInclude = { api_key: { select: { hash: true, name: true, label: true } } } as const;
type KeyAssignmentRow = Prisma.GuardrailKeyAssignmentGetPayload<{ include: typeof keyAssignmentInclude }>;

function keyAssignmentOf(row: KeyAssignmentRow): GuardrailKeyAssignment {
  return {
    id: row.id,
    guardrail_id: row.guardrail_id,
    key_hash: row.api_key.hash,
    key_label: row.api_key.label,
    key_name: row.api_key.name,
    assigned_by: row.assigned_by,
    created_at: row.created_at.toISOString(),
  } satisfies GuardrailKeyAssignment;
}

function memberAssignmentOf(row: Prisma.GuardrailMemberAssignmentGetPayload<object>): GuardrailMemberAssignment {
  return {
    id: row.id,
    guardrail_id: row.guardrail_id,
    user_id: row.user_id,
    organization_id: row.organization_id,
    assigned_by: row.assigned_by,
    created_at: row.created_at.toISOString(),
  } satisfies GuardrailMemberAssignment;
}

/**
 * The organization's guardrail with this id. A non-UUID or foreign id, or (for a regular key) a
 * guardrail of another workspace, is not found.
 */
async function findGuardrail(db: Reader, actor: Actor, id: string): Promise<GuardrailRow> {
  const row = isUuid(id)
    ? await db.guardrail.findFirst({ where: { id: id.toLowerCase(), organization_id: actor.organizationId } })
    : null;
  if (!row || !canSeeWorkspace(actor, row.workspace_id)) throw new NotFound(`guardrail ${id}`);
  return row;
}

/**
 * One page of a workspace's guardrails ($2, or the organization's default workspace when null) with
 * the total and the workspace id, in one round trip. A page past the end is one row of nulls.
 */
const GUARDRAILS_PAGE = statement(`
  SELECT w.id AS listed_workspace_id, (SELECT count(*) FROM guardrails WHERE workspace_id = w.id)::int AS total, g.*
  FROM (SELECT coalesce($2::uuid, o.default_workspace_id) AS id FROM organizations o WHERE o.id = $1) w
  LEFT JOIN LATERAL (
    SELECT * FROM guardrails WHERE workspace_id = w.id ORDER BY created_at, id OFFSET $3 LIMIT $4
  ) g ON true
  ORDER BY g.created_at, g.id`);

type GuardrailPageRow = { listed_workspace_id: string | null; total: number } & (GuardrailData | { [K in keyof GuardrailData]: null });

/**
 * GET /guardrails lists only 401 and 500: a workspace the key may not look into (another
 * organization's, one that does not exist, or for a regular key another workspace than its own)
 * has no guardrails to show it, rather than a 403 or 404.
 */
const NOTHING_VISIBLE = { data: [], total_count: 0 };

export async function listGuardrails(db: Db, actor: Actor, input: ListGuardrailsInput) {
  let named: string | null = null;
  if (input.workspace_id) {
    const workspace = await resolveWorkspace(db, actor, input.workspace_id).catch((error: unknown) => {
      if (error instanceof NotFound) return null;
      throw error;
    });
    if (!workspace || !canSeeWorkspace(actor, workspace.id)) return NOTHING_VISIBLE;
    named = workspace.id;
  }
  const rows = await queryRows<GuardrailPageRow>(db, GUARDRAILS_PAGE, [actor.organizationId, named, input.offset, input.limit]);
  const workspaceId = rows[0]?.listed_workspace_id;
  if (!workspaceId) throw new Error(`organization ${actor.organizationId} has no default workspace`);
  if (!canSeeWorkspace(actor, workspaceId)) return NOTHING_VISIBLE;
  return { data: rows.flatMap((r) => (r.id === null ? [] : [guardrailOf(r)])), total_count: rows[0]!.total };
}

export async function listGuardrailKeyAssignments(db: Db, actor: Actor, input: ListGuardrailAssignmentsInput) {
  const guardrail = await findGuardrail(db, actor, input.id);
  const where = { guardrail_id: guardrail.id };
  const [rows, total] = await Promise.all([
    db.guardrailKeyAssignment.findMany({ where, include: keyAssignmentInclude, orderBy: ORDER, skip: input.offset, take: input.limit }),
    db.guardrailKeyAssignment.count({ where }),
  ]);
  return { data: rows.map(keyAssignmentOf), total_count: total };
}

export async function listGuardrailMemberAssignments(db: Db, actor: Actor, input: ListGuardrailAssignmentsInput) {
  const guardrail = await findGuardrail(db, actor, input.id);
  const where = { guardrail_id: guardrail.id };
  const [rows, total] = await Promise.all([
    db.guardrailMemberAssignment.findMany({ where, orderBy: ORDER, skip: input.offset, take: input.limit }),
    db.guardrailMemberAssignment.count({ where }),
  ]);
  return { data: rows.map(memberAssignmentOf), total_count: total };
}

export async function createGuardrail(db: Db, actor: Actor, input: CreateGuardrailInput): Promise<Guardrail> {
  const workspace = await resolveWorkspaceOrOwn(db, actor, input.workspace_id);
  const row = await db.guardrail.create({
    data: {
      organization_id: actor.organizationId,
      workspace_id: workspace.id,
      name: input.name,
      description: input.description ?? '',
      allowed_models: jsonList(input.allowed_models ?? null),
      ignored_models: jsonList(input.ignored_models ?? null),
      allowed_providers: jsonList(input.allowed_providers ?? null),
      ignored_providers: jsonList(input.ignored_providers ?? null),
      enforce_zdr: input.enforce_zdr ?? false,
      limit_usd: input.limit_usd ?? 0,
      reset_interval: input.reset_interval ?? null,
      include_byok_in_budgets: input.include_byok_in_budgets ?? false,
    },
  });
  return guardrailOf(row);
}

export async function updateGuardrail(db: Db, actor: Actor, input: UpdateGuardrailInput): Promise<Guardrail> {
  const { id, allowed_models, ignored_models, allowed_providers, ignored_providers, ...scalars } = input;
  const existing = await findGuardrail(db, actor, id);
  const row = await db.guardrail.update({
    where: { id: existing.id },
    data: {
      ...scalars,
      allowed_models: jsonList(allowed_models),
      ignored_models: jsonList(ignored_models),
      allowed_providers: jsonList(allowed_providers),
      ignored_providers: jsonList(ignored_providers),
    },
  });
  return guardrailOf(row);
}

function unknownIds(kind: 'key_hashes' | 'user_ids', ids: string[]): Invalid {
  return new Invalid(`${kind} that are not in the organization`, {
    reason: `unknown or foreign ${kind}`,
    [`invalid_${kind}`]: ids,
  });
}

/**
 * Assigns keys (by hash) of the organization. Any unknown or foreign hash: 400 naming them, nothing
 * assigned. Existing assignments are skipped; concurrent calls cannot duplicate (unique constraint).
 */
export async function assignGuardrailKeys(db: Db, actor: Actor, input: GuardrailKeysInput) {
  const hashes = [...new Set(input.key_hashes)];
  return db.$transaction(async (tx) => {
    const guardrail = await findGuardrail(tx, actor, input.id);
    const keys = await tx.apiKey.findMany({
      where: { organization_id: actor.organizationId, hash: { in: hashes } },
      select: { id: true, hash: true },
    });
    const found = new Map(keys.map((k) => [k.hash, k.id]));
    const missing = hashes.filter((hash) => !found.has(hash));
    if (missing.length > 0) throw unknownIds('key_hashes', missing);
    const created = await tx.guardrailKeyAssignment.createManyAndReturn({
      data: hashes.map((hash) => ({
        organization_id: actor.organizationId,
        guardrail_id: guardrail.id,
        api_key_id: found.get(hash)!,
        assigned_by: actor.userId,
      })),
      skipDuplicates: true,
      include: keyAssignmentInclude,
    });
    created.sort((a, b) => hashes.indexOf(a.api_key.hash) - hashes.indexOf(b.api_key.hash));
    return { assigned_count: created.length, data: created.map(keyAssignmentOf) };
  });
}

export async function unassignGuardrailKeys(db: Db, actor: Actor, input: GuardrailKeysInput) {
  const guardrail = await findGuardrail(db, actor, input.id);
  const { count } = await db.guardrailKeyAssignment.deleteMany({
    where: { guardrail_id: guardrail.id, api_key: { hash: { in: input.key_hashes } } },
  });
  return { unassigned_count: count };
}

/** Assigns organization members; same rules as keys. */
export async function assignGuardrailMembers(db: Db, actor: Actor, input: GuardrailMembersInput) {
  const userIds = [...new Set(input.user_ids)];
  return db.$transaction(async (tx) => {
    const guardrail = await findGuardrail(tx, actor, input.id);
    const members = await tx.$queryRaw<{ user_id: string }[]>`
      SELECT user_id FROM organization_members
      WHERE organization_id = ${actor.organizationId} AND user_id = ANY(${userIds}::text[])
      FOR SHARE`;
    const known = new Set(members.map((m) => m.user_id));
    const missing = userIds.filter((id) => !known.has(id));
    if (missing.length > 0) throw unknownIds('user_ids', missing);
    const created = await tx.guardrailMemberAssignment.createManyAndReturn({
      data: userIds.map((user_id) => ({
        organization_id: actor.organizationId,
        guardrail_id: guardrail.id,
        user_id,
        assigned_by: actor.userId,
      })),
      skipDuplicates: true,
    });
    created.sort((a, b) => userIds.indexOf(a.user_id) - userIds.indexOf(b.user_id));
    return { assigned_count: created.length, data: created.map(memberAssignmentOf) };
  });
}

export async function unassignGuardrailMembers(db: Db, actor: Actor, input: GuardrailMembersInput) {
  const guardrail = await findGuardrail(db, actor, input.id);
  const { count } = await db.guardrailMemberAssignment.deleteMany({
    where: { guardrail_id: guardrail.id, user_id: { in: input.user_ids } },
  });
  return { unassigned_count: count };
}
