// Guardrails of a workspace, and their bulk key and member assignments (who assigned them is
// recorded). Key assignments show the key's hash, name and masked label, never a secret.
import { Prisma, queryRows, rawRows, type Db, type Guardrail as GuardrailRow } from '@switchyard/db';
import {
  GUARDRAIL_FLAG_FIELDS,
  type CreateGuardrailInput,
  type Guardrail,
  type GuardrailIdInput,
  type GuardrailKeyAssignment,
  type GuardrailKeysInput,
  type GuardrailMemberAssignment,
  type GuardrailMembersInput,
  type ListAllGuardrailAssignmentsInput,
  type ListGuardrailAssignmentsInput,
  type ListGuardrailsInput,
  type UpdateGuardrailInput,
} from '@switchyard/schema';
import { z } from 'zod';
import { Invalid, NotFound } from '../../lib/errors.js';
import { jsonList, listOrNull } from '../../lib/json-list.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { canSeeWorkspace, findOwned, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields, created, removed } from '../audit/audit.js';
import { lockMembers } from '../../access/member-locks.js';
import { defaultGuardrailId } from './default-guardrail.js';
import { pageOf, type PageWindow } from '../pages.js';
import { guardrailsPageQuery } from './guardrails-queries.js';

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
    allowed_data_regions: row.allowed_data_regions as Guardrail['allowed_data_regions'],
    content_filters: row.content_filters as Guardrail['content_filters'],
    content_filter_builtins: row.content_filter_builtins as Guardrail['content_filter_builtins'],
    enforce_zdr_anthropic: row.enforce_zdr_anthropic,
    enforce_zdr_openai: row.enforce_zdr_openai,
    enforce_zdr_google: row.enforce_zdr_google,
    enforce_zdr_xai: row.enforce_zdr_xai,
    enforce_zdr_other: row.enforce_zdr_other,
    enable_free_model_publication: row.enable_free_model_publication,
    enable_free_model_training: row.enable_free_model_training,
    enable_paid_model_training: row.enable_paid_model_training,
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
  return findOwned(
    actor,
    'guardrail',
    id,
    (where) => db.guardrail.findFirst({ where }),
    (row) => canSeeWorkspace(actor, row.workspace_id),
  );
}

/**
 * GET /guardrails lists only 401 and 500: a workspace the key may not look into (another
 * organization's, one that does not exist, or for a regular key another workspace than its own)
 * has no guardrails to show it, rather than a 403 or 404.
 */
const NOTHING_VISIBLE = { data: [], total_count: 0 };

export async function listGuardrails(deps: Uses<'db'>, actor: Actor, input: ListGuardrailsInput) {
  const { db } = deps;
  let named: string | null = null;
  if (input.workspace_id) {
    const workspace = await resolveWorkspace(db, actor, input.workspace_id).catch((error: unknown) => {
      if (error instanceof NotFound) return null;
      throw error;
    });
    if (!workspace || !canSeeWorkspace(actor, workspace.id)) return NOTHING_VISIBLE;
    named = workspace.id;
  }
  const page = guardrailsPageQuery(actor.organizationId, named, input);
  const rows = await queryRows(db, page.statement, page.values);
  const workspaceId = rows[0]?.listed_workspace_id;
  if (!workspaceId) throw new Error(`organization ${actor.organizationId} has no default workspace`);
  if (!canSeeWorkspace(actor, workspaceId)) return NOTHING_VISIBLE;
  return { data: rows.flatMap((r) => (r.id === null ? [] : [guardrailOf(r)])), total_count: rows[0]!.total };
}

/** One page of key assignments (of a guardrail, or of the organization), oldest first, with the total. */
async function keyAssignmentPage(db: Db, where: Prisma.GuardrailKeyAssignmentWhereInput, page: PageWindow) {
  return pageOf(
    page,
    (slice) => db.guardrailKeyAssignment.findMany({ where, include: keyAssignmentInclude, orderBy: ORDER, ...slice }),
    () => db.guardrailKeyAssignment.count({ where }),
    keyAssignmentOf,
  );
}

/** One page of member assignments (of a guardrail, or of the organization), oldest first, with the total. */
async function memberAssignmentPage(db: Db, where: Prisma.GuardrailMemberAssignmentWhereInput, page: PageWindow) {
  return pageOf(
    page,
    (slice) => db.guardrailMemberAssignment.findMany({ where, orderBy: ORDER, ...slice }),
    () => db.guardrailMemberAssignment.count({ where }),
    memberAssignmentOf,
  );
}

export async function listGuardrailKeyAssignments(deps: Uses<'db'>, actor: Actor, input: ListGuardrailAssignmentsInput) {
  const { db } = deps;
  const guardrail = await findGuardrail(db, actor, input.id);
  return keyAssignmentPage(db, { guardrail_id: guardrail.id }, input);
}

export async function listGuardrailMemberAssignments(deps: Uses<'db'>, actor: Actor, input: ListGuardrailAssignmentsInput) {
  const { db } = deps;
  const guardrail = await findGuardrail(db, actor, input.id);
  return memberAssignmentPage(db, { guardrail_id: guardrail.id }, input);
}

/** The labels the server gives builtin filters (input labels are ignored); unknown slugs keep their slug. */
const BUILTIN_LABELS: Record<string, string> = {
  email: 'Email address',
  phone: 'Phone number',
  ssn: 'Social security number',
  'credit-card': 'Credit card number',
  'ip-address': 'IP address',
  secrets: 'Secret',
  'person-name': 'Person name',
  address: 'Postal address',
  'regex-prompt-injection': 'Prompt injection',
};

/** For a JSON column: undefined leaves it alone, null stores SQL NULL. */
function jsonColumn(value: Prisma.InputJsonValue | null | undefined) {
  if (value === undefined) return undefined;
  return value === null ? Prisma.DbNull : value;
}

/**
 * The stored form of the guardrail fields a create or update sends: limit_usd and reset_interval
 * only together (400 otherwise), custom filter patterns that compile, builtin filters labelled by
 * the server, and the deprecated enforce_zdr copied into each enforce_zdr_* field not given.
 */
function guardrailData(input: Omit<UpdateGuardrailInput, 'id'>) {
  if ((input.limit_usd === undefined) !== (input.reset_interval === undefined)) {
    throw new Invalid('limit_usd and reset_interval must be sent together', { reason: 'limit_usd without reset_interval or the reverse' });
  }
  const invalid = (input.content_filters ?? []).filter((f) => {
    try {
      new RegExp(f.pattern);
      return false;
    } catch {
      return true;
    }
  });
  if (invalid.length > 0) {
    throw new Invalid('content filter patterns that are not regular expressions', { invalid_patterns: invalid.map((f) => f.pattern) });
  }
  const { enforce_zdr, limit_usd, description, allowed_models, ignored_models, allowed_providers, ignored_providers } = input;
  const flags: Partial<Record<(typeof GUARDRAIL_FLAG_FIELDS)[number], boolean | null>> = {};
  for (const field of GUARDRAIL_FLAG_FIELDS) {
    const given = input[field];
    if (given !== undefined) flags[field] = given;
    else if (enforce_zdr !== undefined && field.startsWith('enforce_zdr_')) flags[field] = enforce_zdr;
  }
  return {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(description !== undefined ? { description: description ?? '' } : {}),
    ...(limit_usd !== undefined ? { limit_usd: limit_usd ?? 0, reset_interval: input.reset_interval ?? null } : {}),
    ...(input.include_byok_in_budgets !== undefined ? { include_byok_in_budgets: input.include_byok_in_budgets } : {}),
    ...(enforce_zdr !== undefined ? { enforce_zdr: enforce_zdr ?? false } : {}),
    ...flags,
    allowed_models: jsonList(allowed_models),
    ignored_models: jsonList(ignored_models),
    allowed_providers: jsonList(allowed_providers),
    ignored_providers: jsonList(ignored_providers),
    allowed_data_regions: jsonList(input.allowed_data_regions),
    content_filters: jsonColumn(input.content_filters && input.content_filters.map((f) => ({ pattern: f.pattern, action: f.action, label: f.label ?? null }))),
    content_filter_builtins: jsonColumn(
      input.content_filter_builtins &&
        input.content_filter_builtins.map((f) => ({
          slug: f.slug,
          action: f.action,
          ...(f.slug === 'regex-prompt-injection' ? { scan_scope: f.scan_scope ?? 'all_messages' } : {}),
          label: BUILTIN_LABELS[f.slug] ?? f.slug,
        })),
    ),
  };
}

/** The workspace a create names (UUID or slug), else the default workspace: 400 if that was deleted. */
async function workspaceToFileUnder(db: Db, actor: Actor, ref: string | undefined): Promise<string> {
  if (ref !== undefined) return (await resolveWorkspace(db, actor, ref)).id;
  const organization = await db.organization.findUniqueOrThrow({
    where: { id: actor.organizationId },
    select: { default_workspace_id: true },
  });
  if (!organization.default_workspace_id) throw new Invalid('the default workspace was deleted; name a workspace_id');
  return organization.default_workspace_id;
}

export async function createGuardrail(deps: Uses<'db' | Audited>, actor: Actor, input: CreateGuardrailInput): Promise<Guardrail> {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const { workspace_id, ...fields } = input;
  const data = guardrailData(fields);
  const workspaceId = await workspaceToFileUnder(db, actor, workspace_id);
  const row = await db.$transaction(async (tx) => {
    const row = await tx.guardrail.create({ data: { ...data, name: input.name, ...tenantData(actor), workspace_id: workspaceId } });
    await appendAudit(tx, audit, {
      action: 'guardrails.create',
      targetType: 'guardrail',
      targetId: row.id,
      changes: created({ ...input, workspace_id: workspaceId }),
    });
    return row;
  });
  return guardrailOf(row);
}

export async function getGuardrail(deps: Uses<'db'>, actor: Actor, input: GuardrailIdInput): Promise<Guardrail> {
  return guardrailOf(await findGuardrail(deps.db, actor, input.id));
}

export async function updateGuardrail(deps: Uses<'db' | Audited>, actor: Actor, input: UpdateGuardrailInput): Promise<Guardrail> {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const { id, ...fields } = input;
  const data = guardrailData(fields);
  const existing = await findGuardrail(db, actor, id).catch(async (error: unknown) => {
    if (!(error instanceof NotFound)) throw error;
    // A16: the id of a workspace's default guardrail that was never written: this PATCH creates it.
    const workspace = await defaultGuardrailWorkspace(db, actor, id);
    if (!workspace) throw error;
    return db.guardrail.upsert({
      where: { id },
      create: { ...data, id, name: fields.name ?? 'Default guardrail', organization_id: workspace.organization_id, workspace_id: workspace.id },
      update: {},
    });
  });
  const row = await db.$transaction(async (tx) => {
    const row = await tx.guardrail.update({ where: { id: existing.id }, data });
    await appendAudit(tx, audit, {
      action: 'guardrails.update',
      targetType: 'guardrail',
      targetId: row.id,
      changes: changedFields(guardrailOf(existing), guardrailOf(row), Object.keys(fields)),
    });
    return row;
  });
  return guardrailOf(row);
}

/** The live workspace of the actor's organization whose default guardrail has this id, if any. */
async function defaultGuardrailWorkspace(db: Db, actor: Actor, id: string) {
  const workspaces = await db.workspace.findMany({
    where: { ...tenantWhere(actor), deleted_at: null },
    select: { id: true, organization_id: true },
  });
  return workspaces.find((w) => defaultGuardrailId(w.id) === id && canSeeWorkspace(actor, w.id)) ?? null;
}

/** Deletes the guardrail; its key and member assignments go with it (ON DELETE CASCADE). */
export async function deleteGuardrail(deps: Uses<'db' | Audited>, actor: Actor, input: GuardrailIdInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const existing = await findGuardrail(db, actor, input.id);
  await db.$transaction(async (tx) => {
    const { count } = await tx.guardrail.deleteMany({ where: { id: existing.id } });
    if (count === 0) throw new NotFound(`guardrail ${input.id}`);
    await appendAudit(tx, audit, { action: 'guardrails.delete', targetType: 'guardrail', targetId: existing.id, changes: removed({ name: existing.name }) });
  });
  return { deleted: true as const };
}

/** Every key assignment of the organization, across its guardrails, oldest first. */
export function listAllGuardrailKeyAssignments(deps: Uses<'db'>, actor: Actor, input: ListAllGuardrailAssignmentsInput) {
  return keyAssignmentPage(deps.db, tenantWhere(actor), input);
}

/** Every member assignment of the organization, across its guardrails, oldest first. */
export function listAllGuardrailMemberAssignments(deps: Uses<'db'>, actor: Actor, input: ListAllGuardrailAssignmentsInput) {
  return memberAssignmentPage(deps.db, tenantWhere(actor), input);
}

function unknownIds(kind: 'key_hashes' | 'member_user_ids', ids: string[]): Invalid {
  return new Invalid(`${kind} that are not in the organization`, {
    reason: `unknown or foreign ${kind}`,
    [`invalid_${kind}`]: ids,
  });
}

/** The row schema of assignGuardrailKeys' statement (made once: zod compiles a schema on its first parse). */
const ASSIGNED_ROW = z.object({ id: z.string() });

/**
 * Assigns keys (by hash) of the organization. Any unknown or foreign hash: 400 naming them, nothing
 * assigned. A key holds at most one guardrail (unique api_key_id): assigning moves it here from any
 * other; a key already assigned here is left as it is and not counted.
 */
export async function assignGuardrailKeys(deps: Uses<'db' | Audited>, actor: Actor, input: GuardrailKeysInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const hashes = [...new Set(input.key_hashes)];
  return db.$transaction(async (tx) => {
    const guardrail = await findGuardrail(tx, actor, input.id);
    const keys = await tx.apiKey.findMany({
      where: { ...tenantWhere(actor), hash: { in: hashes } },
      select: { id: true, hash: true },
    });
    const found = new Map(keys.map((k) => [k.hash, k.id]));
    const missing = hashes.filter((hash) => !found.has(hash));
    if (missing.length > 0) throw unknownIds('key_hashes', missing);
    const assigned = await rawRows(
      tx,
      ASSIGNED_ROW,
      Prisma.sql`
      INSERT INTO guardrail_key_assignments (id, organization_id, guardrail_id, api_key_id, assigned_by)
      SELECT gen_random_uuid(), ${actor.organizationId}, ${guardrail.id}::uuid, k, ${actor.userId}
      FROM unnest(${keys.map((k) => k.id)}::uuid[]) AS k
      ON CONFLICT (api_key_id) DO UPDATE
        SET guardrail_id = excluded.guardrail_id, assigned_by = excluded.assigned_by, created_at = now()
        WHERE guardrail_key_assignments.guardrail_id <> excluded.guardrail_id
      RETURNING id`,
    );
    await appendAudit(tx, audit, {
      action: 'guardrails.assignKeys',
      targetType: 'guardrail',
      targetId: guardrail.id,
      changes: { after: { key_hashes: hashes } },
    });
    return { assigned_count: assigned.length };
  });
}

export async function unassignGuardrailKeys(deps: Uses<'db' | Audited>, actor: Actor, input: GuardrailKeysInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const guardrail = await findGuardrail(db, actor, input.id);
  return db.$transaction(async (tx) => {
    const { count } = await tx.guardrailKeyAssignment.deleteMany({
      where: { guardrail_id: guardrail.id, api_key: { hash: { in: input.key_hashes } } },
    });
    await appendAudit(tx, audit, {
      action: 'guardrails.unassignKeys',
      targetType: 'guardrail',
      targetId: guardrail.id,
      changes: { before: { key_hashes: input.key_hashes } },
    });
    return { unassigned_count: count };
  });
}

/** Assigns organization members; same rules as keys. */
export async function assignGuardrailMembers(deps: Uses<'db' | Audited>, actor: Actor, input: GuardrailMembersInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const userIds = [...new Set(input.member_user_ids)];
  return db.$transaction(async (tx) => {
    const guardrail = await findGuardrail(tx, actor, input.id);
    await lockMembers(tx, actor, userIds, (unknown) => unknownIds('member_user_ids', unknown));
    const { count } = await tx.guardrailMemberAssignment.createMany({
      data: userIds.map((user_id) => ({
        ...tenantData(actor),
        guardrail_id: guardrail.id,
        user_id,
        assigned_by: actor.userId,
      })),
      skipDuplicates: true,
    });
    await appendAudit(tx, audit, {
      action: 'guardrails.assignMembers',
      targetType: 'guardrail',
      targetId: guardrail.id,
      changes: { after: { member_user_ids: userIds } },
    });
    return { assigned_count: count };
  });
}

export async function unassignGuardrailMembers(deps: Uses<'db' | Audited>, actor: Actor, input: GuardrailMembersInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const guardrail = await findGuardrail(db, actor, input.id);
  return db.$transaction(async (tx) => {
    const { count } = await tx.guardrailMemberAssignment.deleteMany({
      where: { guardrail_id: guardrail.id, user_id: { in: input.member_user_ids } },
    });
    await appendAudit(tx, audit, {
      action: 'guardrails.unassignMembers',
      targetType: 'guardrail',
      targetId: guardrail.id,
      changes: { before: { member_user_ids: input.member_user_ids } },
    });
    return { unassigned_count: count };
  });
}
