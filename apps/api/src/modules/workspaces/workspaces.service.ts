// Workspaces (POST, GET, PATCH, DELETE /workspaces...) and their members (GET /workspaces/{id}/members,
// POST /workspaces/{id}/members/add and /remove).
//
// The default workspace's membership is the organization's: every organization member is a member
// of it, with the role they hold in the organization. Its member list is therefore read from
// organization_members (membership id = the organization membership's id), so it can never drift.
// Other workspaces keep their own rows in workspace_members.
import { Prisma, rawRows, type Workspace as WorkspaceRow, type WorkspaceMember as MemberRow } from '@switchyard/db';
import { z } from 'zod';
import type {
  AddWorkspaceMembersInput,
  CreateWorkspaceInput,
  DeleteWorkspaceInput,
  ListWorkspaceMembersInput,
  RemoveWorkspaceMembersInput,
  UpdateWorkspaceInput,
  Workspace,
  WorkspaceMember,
} from '@switchyard/schema';
import { refuseDuplicates } from '../../lib/db-errors.js';
import { Invalid, NotFound } from '../../lib/errors.js';
import { jsonList, listOrNull } from '../../lib/json-list.js';
import type { Actor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { assertWorkspaceAccess, defaultWorkspaceId, resolveWorkspace } from '../../access/workspaces.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfTenant, changedFields, created, removed } from '../audit/audit.js';
import { lockMembers } from '../../access/member-locks.js';
import { pageOf } from '../pages.js';
import { defaultGuardrailId } from '../guardrails/default-guardrail.js';
import { enqueueWorkspaceDeletion } from './workspace-deletion-job.js';

const numberList = (value: Prisma.JsonValue | null): number[] | null => (Array.isArray(value) ? value.map(Number) : null);

/** For a write: undefined leaves the column alone, null stores SQL NULL, a list stores JSON. */
const jsonNumbers = (value: number[] | null | undefined) => (value === undefined ? undefined : value === null ? Prisma.DbNull : value);

function workspaceOf(row: WorkspaceRow, defaultId: string): Workspace {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    default_guardrail_id: defaultGuardrailId(row.id),
    default_text_model: row.default_text_model,
    default_image_model: row.default_image_model,
    default_provider_sort: row.default_provider_sort,
    io_logging_api_key_ids: numberList(row.io_logging_api_key_ids),
    io_logging_sampling_rate: row.io_logging_sampling_rate,
    is_data_discount_logging_enabled: row.is_data_discount_logging_enabled,
    is_observability_broadcast_enabled: row.is_observability_broadcast_enabled,
    is_observability_io_logging_enabled: row.is_observability_io_logging_enabled,
    disabled_server_tools: listOrNull(row.disabled_server_tools),
    include_byok_in_budgets: row.include_byok_in_budgets,
    is_default: row.id === defaultId,
  } satisfies Workspace;
}

/** The settings columns of a create or update; an empty disabled_server_tools list clears it (null). */
function settingsOf(input: Omit<UpdateWorkspaceInput, 'id'>) {
  const { disabled_server_tools, io_logging_api_key_ids, ...rest } = input;
  return {
    ...rest,
    disabled_server_tools: jsonList(disabled_server_tools?.length === 0 ? null : disabled_server_tools),
    io_logging_api_key_ids: jsonNumbers(io_logging_api_key_ids),
  };
}

function memberOf(row: Pick<MemberRow, 'id' | 'workspace_id' | 'user_id' | 'role' | 'created_at'>): WorkspaceMember {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    user_id: row.user_id,
    role: row.role,
    created_at: row.created_at.toISOString(),
  } satisfies WorkspaceMember;
}

const slugTaken = (slug: string) => new Invalid(`workspace slug ${slug} is taken`, { reason: 'slug taken', slug });

/** GET /workspaces: the organization's workspaces, oldest first; deleted ones are gone. */
export async function listWorkspaces(deps: Uses<'db'>, actor: Actor, input: { offset: number; limit: number }) {
  const { db } = deps;
  const where = { ...tenantWhere(actor), deleted_at: null };
  const [found, defaultId] = await Promise.all([
    pageOf(
      input,
      (slice) => db.workspace.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], ...slice }),
      () => db.workspace.count({ where }),
      (row) => row,
    ),
    defaultWorkspaceId(db, actor),
  ]);
  return { data: found.data.map((row) => workspaceOf(row, defaultId)), total_count: found.total_count };
}

/** GET /workspaces/{id}: by UUID or slug (`id`). */
export async function getWorkspace(deps: Uses<'db'>, actor: Actor, input: { id: string }): Promise<Workspace> {
  const { db } = deps;
  const workspace = await resolveWorkspace(db, actor, input.id);
  return workspaceOf(workspace, await defaultWorkspaceId(db, actor));
}

/** POST /workspaces; created_by is the caller key's user. */
export async function createWorkspace(deps: Uses<'db' | Audited>, actor: Actor, input: CreateWorkspaceInput): Promise<Workspace> {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const { name, slug, ...settings } = input;
  const row = await refuseDuplicates(
    () =>
      db.$transaction(async (tx) => {
        const row = await tx.workspace.create({ data: { ...tenantData(actor), slug, name, created_by: actor.userId, ...settingsOf(settings) } });
        await appendAudit(tx, audit, { action: 'workspaces.create', targetType: 'workspace', targetId: row.id, changes: created(input) });
        return row;
      }),
    () => slugTaken(input.slug),
  );
  return workspaceOf(row, await defaultWorkspaceId(db, actor));
}

/** PATCH /workspaces/{id}: the fields given. */
export async function updateWorkspace(deps: Uses<'db' | Audited>, actor: Actor, input: UpdateWorkspaceInput): Promise<Workspace> {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const { id, ...changes } = input;
  const workspace = await resolveWorkspace(db, actor, id);
  const defaultId = await defaultWorkspaceId(db, actor);
  // The default workspace keeps its slug: compat.md names it `default`.
  if (changes.slug !== undefined && changes.slug !== workspace.slug && workspace.id === defaultId) {
    throw new Invalid('the default workspace keeps its slug', { reason: 'default workspace slug is fixed' });
  }
  const [row] = await refuseDuplicates(
    () =>
      db.$transaction(async (tx) => {
        const before = await tx.workspace.findFirst({ where: { id: workspace.id, deleted_at: null } });
        const rows = await tx.workspace.updateManyAndReturn({ where: { id: workspace.id, deleted_at: null }, data: settingsOf(changes) });
        if (before && rows[0]) {
          const data = settingsOf(changes) as Record<string, unknown>;
          await appendAudit(tx, audit, {
            action: 'workspaces.update',
            targetType: 'workspace',
            targetId: workspace.id,
            changes: changedFields(before, rows[0], Object.keys(data)),
          });
        }
        return rows;
      }),
    () => (changes.slug ? slugTaken(changes.slug) : undefined),
  );
  if (!row) throw new NotFound(`workspace ${id}`);
  return workspaceOf(row, defaultId);
}

/** Live keys of a workspace that still authenticate (not disabled), optionally only those of some creators. */
const activeKeys = (workspaceId: string, creators?: string[]) => ({
  workspace_id: workspaceId,
  deleted_at: null,
  disabled: false,
  ...(creators ? { creator_user_id: { in: creators } } : {}),
});

/** The row schema of deleteWorkspace's lock (made once: zod compiles a schema on its first parse). */
const LOCKED_ROW = z.object({ id: z.string() });

/**
 * DELETE /workspaces/{id}. The default workspace is never deleted here (400, with or without
 * confirm_default_workspace_deletion: keys, credentials and defaults of the organization hang on it).
 * A workspace with active (enabled) keys is refused (400). Otherwise its budgets, guardrails and
 * memberships are removed, its BYOK credentials deleted (secrets destroyed), its disabled keys marked
 * deleted, and the workspace itself marked deleted with its slug freed (the slug becomes the id);
 * in the same transaction, the deletion of its data is queued (workspace-deletion.service.ts: its
 * stored bytes, generations, rollups and every row that names it; the organization's totals stay).
 * The workspace row is locked, so a concurrent delete or budget change waits. Its keys are
 * forgotten by the key cache (deps.keys) once it commits; the job goes to deps.jobs. The time marked
 * deleted is the audit entry's (one deps.now()).
 */
export async function deleteWorkspace(deps: Uses<'db' | 'keys' | 'jobs' | Audited>, actor: Actor, input: DeleteWorkspaceInput): Promise<{ deleted: true }> {
  const { db, keys, jobs } = deps;
  const audit = auditOfTenant(actor, deps);
  const now = audit.at;
  const workspace = await resolveWorkspace(db, actor, input.id);
  if (workspace.id === (await defaultWorkspaceId(db, actor))) {
    throw new Invalid('the default workspace cannot be deleted', { reason: 'default workspace' });
  }
  const removedKeys = await db.$transaction(async (tx) => {
    const [locked] = await rawRows(tx, LOCKED_ROW, Prisma.sql`SELECT id FROM workspaces WHERE id = ${workspace.id}::uuid AND deleted_at IS NULL FOR UPDATE`);
    if (!locked) throw new NotFound(`workspace ${input.id}`);
    const active = await tx.apiKey.count({ where: activeKeys(workspace.id) });
    if (active > 0) {
      throw new Invalid('a workspace with active keys cannot be deleted', { reason: 'workspace has active keys', active_keys: active });
    }
    await tx.budget.deleteMany({ where: { workspace_id: workspace.id } });
    await tx.guardrail.deleteMany({ where: { workspace_id: workspace.id } });
    await tx.workspaceMember.deleteMany({ where: { workspace_id: workspace.id } });
    await tx.byokCredential.updateMany({
      where: { workspace_id: workspace.id, deleted_at: null },
      data: { secret_ciphertext: null, disabled: true, deleted_at: now },
    });
    const gone = await tx.apiKey.updateManyAndReturn({
      where: { workspace_id: workspace.id, deleted_at: null },
      data: { disabled: true, deleted_at: now },
      select: { hash: true },
    });
    await tx.workspace.update({ where: { id: workspace.id }, data: { deleted_at: now, slug: workspace.id } });
    await enqueueWorkspaceDeletion(tx, jobs, actor, workspace.id);
    await appendAudit(tx, audit, {
      action: 'workspaces.delete',
      targetType: 'workspace',
      targetId: workspace.id,
      changes: removed({ slug: workspace.slug, deleted_key_hashes: gone.map((k) => k.hash) }),
    });
    return gone;
  });
  for (const key of removedKeys) keys.forget(key.hash);
  return { deleted: true };
}

/**
 * POST /workspaces/{id}/members/remove: removes these users' memberships of the workspace; ids that
 * are not members count for nothing. A member with active keys in the workspace cannot be removed
 * (400 naming them; nothing is removed). The default workspace's members are the organization's
 * (400: remove them from the organization instead).
 */
export async function removeWorkspaceMembers(deps: Uses<'db' | Audited>, actor: Actor, input: RemoveWorkspaceMembersInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const userIds = [...new Set(input.user_ids)];
  return db.$transaction(async (tx) => {
    const workspace = await resolveWorkspace(tx, actor, input.id);
    if (workspace.id === (await defaultWorkspaceId(tx, actor))) {
      throw new Invalid("the default workspace's members are the organization's members", {
        reason: 'default workspace membership follows the organization',
      });
    }
    const holding = await tx.apiKey.findMany({
      where: activeKeys(workspace.id, userIds),
      select: { creator_user_id: true },
      distinct: ['creator_user_id'],
    });
    if (holding.length > 0) {
      throw new Invalid('members with active keys in the workspace cannot be removed', {
        reason: 'members hold active keys',
        user_ids_with_active_keys: holding.map((row) => row.creator_user_id),
      });
    }
    const gone = await tx.workspaceMember.findMany({ where: { workspace_id: workspace.id, user_id: { in: userIds } }, select: { user_id: true } });
    const { count } = await tx.workspaceMember.deleteMany({ where: { workspace_id: workspace.id, user_id: { in: userIds } } });
    await appendAudit(tx, audit, {
      action: 'workspaces.removeMembers',
      targetType: 'workspace',
      targetId: workspace.id,
      changes: removed({ user_ids: gone.map((m) => m.user_id) }),
    });
    return { removed_count: count };
  });
}

const ORDER = [{ created_at: 'asc' as const }, { id: 'asc' as const }];

export async function listWorkspaceMembers(deps: Uses<'db'>, actor: Actor, input: ListWorkspaceMembersInput) {
  const { db } = deps;
  const workspace = await resolveWorkspace(db, actor, input.id);
  assertWorkspaceAccess(actor, workspace.id);
  if (workspace.id === (await defaultWorkspaceId(db, actor))) {
    const where = tenantWhere(actor);
    return pageOf(
      input,
      (slice) => db.organizationMember.findMany({ where, orderBy: ORDER, ...slice }),
      () => db.organizationMember.count({ where }),
      (row) => memberOf({ ...row, workspace_id: workspace.id }),
    );
  }
  const where = { workspace_id: workspace.id };
  return pageOf(
    input,
    (slice) => db.workspaceMember.findMany({ where, orderBy: ORDER, ...slice }),
    () => db.workspaceMember.count({ where }),
    memberOf,
  );
}

/**
 * Adds organization members to a workspace with the role they hold in the organization. All ids
 * are checked first: any unknown or foreign id is a 400 naming them, and nothing is added.
 * Existing members are skipped (ON CONFLICT DO NOTHING on (workspace_id, user_id)), so concurrent
 * adds of the same users create each membership once. Answers the memberships it created, in the
 * order of `user_ids`.
 */
export async function addWorkspaceMembers(deps: Uses<'db' | Audited>, actor: Actor, input: AddWorkspaceMembersInput) {
  const { db } = deps;
  const audit = auditOfTenant(actor, deps);
  const userIds = [...new Set(input.user_ids)];
  return db.$transaction(async (tx) => {
    const workspace = await resolveWorkspace(tx, actor, input.id);
    const members = await lockMembers(
      tx,
      actor,
      userIds,
      (unknown) => new Invalid('user ids that are not members of the organization', { reason: 'unknown or foreign user ids', invalid_user_ids: unknown }),
    );
    // Every organization member already belongs to the default workspace.
    if (workspace.id === (await defaultWorkspaceId(tx, actor))) {
      await appendAudit(tx, audit, { action: 'workspaces.addMembers', targetType: 'workspace', targetId: workspace.id, changes: { after: { user_ids: [] } } });
      return [];
    }

    // The workspace role is the organization's (workspace_role and Prisma's OrgRole share their values).
    const roles = new Map(members.map((m) => [m.user_id, m.role]));
    const created = await tx.workspaceMember.createManyAndReturn({
      data: userIds.map((user_id) => ({
        ...tenantData(actor),
        workspace_id: workspace.id,
        user_id,
        role: roles.get(user_id)!,
      })),
      skipDuplicates: true,
    });
    await appendAudit(tx, audit, {
      action: 'workspaces.addMembers',
      targetType: 'workspace',
      targetId: workspace.id,
      changes: { after: { user_ids: created.map((m) => m.user_id) } },
    });
    const order = new Map(userIds.map((id, i) => [id, i]));
    created.sort((a, b) => order.get(a.user_id)! - order.get(b.user_id)!);
    return created.map(memberOf);
  });
}
