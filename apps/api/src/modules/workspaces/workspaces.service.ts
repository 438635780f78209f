// Workspaces (internal procedures) and their members (GET /workspaces/{id}/members,
// POST /workspaces/{id}/members/add).
//
// The default workspace's membership is the organization's: every organization member is a member
// of it, with the role they hold in the organization. Its member list is therefore read from
// organization_members (membership id = the organization membership's id), so it can never drift.
// Other workspaces keep their own rows in workspace_members.
import type { Db, Workspace as WorkspaceRow, WorkspaceMember as MemberRow } from '@switchyard/db';
import type {
  AddWorkspaceMembersInput,
  CreateWorkspaceInput,
  ListWorkspaceMembersInput,
  UpdateWorkspaceInput,
  Workspace,
  WorkspaceMember,
  WorkspaceRole,
} from '@switchyard/schema';
import { isUniqueViolation } from '../../db-errors.js';
import { Invalid } from '../../errors.js';
import type { Actor } from '../../access/callers.js';
import { assertWorkspaceAccess, defaultWorkspaceId, resolveWorkspace } from '../../access/workspaces.js';

function workspaceOf(row: WorkspaceRow, defaultId: string): Workspace {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    is_default: row.id === defaultId,
    include_byok_in_budgets: row.include_byok_in_budgets,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  } satisfies Workspace;
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

export async function listWorkspaces(db: Db, actor: Actor, page: { offset: number; limit: number }) {
  const where = { organization_id: actor.organizationId };
  const [rows, total, defaultId] = await Promise.all([
    db.workspace.findMany({ where, orderBy: [{ created_at: 'asc' }, { id: 'asc' }], skip: page.offset, take: page.limit }),
    db.workspace.count({ where }),
    defaultWorkspaceId(db, actor),
  ]);
  return { data: rows.map((row) => workspaceOf(row, defaultId)), total_count: total };
}

export async function createWorkspace(db: Db, actor: Actor, input: CreateWorkspaceInput): Promise<Workspace> {
  try {
    const row = await db.workspace.create({
      data: {
        organization_id: actor.organizationId,
        slug: input.slug,
        name: input.name,
        description: input.description ?? null,
        include_byok_in_budgets: input.include_byok_in_budgets ?? false,
      },
    });
    return workspaceOf(row, await defaultWorkspaceId(db, actor));
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(input.slug);
    throw error;
  }
}

export async function updateWorkspace(db: Db, actor: Actor, input: UpdateWorkspaceInput): Promise<Workspace> {
  const { id, ...changes } = input;
  const workspace = await resolveWorkspace(db, actor, id);
  const defaultId = await defaultWorkspaceId(db, actor);
  // The default workspace keeps its slug: compat.md names it `default`.
  if (changes.slug !== undefined && changes.slug !== workspace.slug && workspace.id === defaultId) {
    throw new Invalid('the default workspace keeps its slug', { reason: 'default workspace slug is fixed' });
  }
  try {
    const row = await db.workspace.update({ where: { id: workspace.id }, data: changes });
    return workspaceOf(row, defaultId);
  } catch (error) {
    if (isUniqueViolation(error) && changes.slug) throw slugTaken(changes.slug);
    throw error;
  }
}

const ORDER = [{ created_at: 'asc' as const }, { id: 'asc' as const }];

export async function listWorkspaceMembers(db: Db, actor: Actor, input: ListWorkspaceMembersInput) {
  const workspace = await resolveWorkspace(db, actor, input.id);
  assertWorkspaceAccess(actor, workspace.id);
  const page = { skip: input.offset, take: input.limit };
  if (workspace.id === (await defaultWorkspaceId(db, actor))) {
    const where = { organization_id: actor.organizationId };
    const [rows, total] = await Promise.all([
      db.organizationMember.findMany({ where, orderBy: ORDER, ...page }),
      db.organizationMember.count({ where }),
    ]);
    return {
      data: rows.map((row) => memberOf({ ...row, workspace_id: workspace.id })),
      total_count: total,
    };
  }
  const where = { workspace_id: workspace.id };
  const [rows, total] = await Promise.all([
    db.workspaceMember.findMany({ where, orderBy: ORDER, ...page }),
    db.workspaceMember.count({ where }),
  ]);
  return { data: rows.map(memberOf), total_count: total };
}

/**
 * Adds organization members to a workspace with the role they hold in the organization. All ids
 * are checked first: any unknown or foreign id is a 400 naming them, and nothing is added.
 * Existing members are skipped (ON CONFLICT DO NOTHING on (workspace_id, user_id)), so concurrent
 * adds of the same users create each membership once.
 */
export async function addWorkspaceMembers(db: Db, actor: Actor, input: AddWorkspaceMembersInput) {
  const userIds = [...new Set(input.user_ids)];
  return db.$transaction(async (tx) => {
    const workspace = await resolveWorkspace(tx, actor, input.id);
    // FOR SHARE: a member removed concurrently cannot slip between this check and the insert.
    const members = await tx.$queryRaw<{ user_id: string; role: string }[]>`
      SELECT user_id, role::text AS role FROM organization_members
      WHERE organization_id = ${actor.organizationId} AND user_id = ANY(${userIds}::text[])
      FOR SHARE`;
    const known = new Set(members.map((m) => m.user_id));
    const unknown = userIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new Invalid('user ids that are not members of the organization', {
        reason: 'unknown or foreign user ids',
        invalid_user_ids: unknown,
      });
    }
    // Every organization member already belongs to the default workspace.
    if (workspace.id === (await defaultWorkspaceId(tx, actor))) return { added_count: 0, data: [] };

    const roles = new Map(members.map((m) => [m.user_id, (m.role === 'org:admin' ? 'admin' : 'member') as WorkspaceRole]));
    const created = await tx.workspaceMember.createManyAndReturn({
      data: userIds.map((user_id) => ({
        organization_id: actor.organizationId,
        workspace_id: workspace.id,
        user_id,
        role: roles.get(user_id)!,
      })),
      skipDuplicates: true,
    });
    const order = new Map(userIds.map((id, i) => [id, i]));
    created.sort((a, b) => order.get(a.user_id)! - order.get(b.user_id)!);
    return { added_count: created.length, data: created.map(memberOf) };
  });
}
