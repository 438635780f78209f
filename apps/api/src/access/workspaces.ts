// Which organization and workspace a caller may reach, in one place:
// - a tenant names a workspace of its own organization by UUID or slug; another organization's is a 404;
// - a regular key sees only its own workspace; a management key every workspace of its organization;
// - the platform names the organization or workspace it acts on explicitly, never by default.
import type { Db, Organization, Prisma, Workspace } from '@switchyard/db';
import { UUID_PATTERN } from '@switchyard/schema';
import { Forbidden, NotFound } from '../lib/errors.js';
import type { Actor } from './callers.js';
import { tenantWhere } from './tenancy.js';
import { readsOrganization } from './rules.js';

type Reader = Db | Prisma.TransactionClient;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * The caller's organization's row with this id (a UUID column), read by `find` with the `where`
 * it is given; NotFound naming `what` otherwise. A non-UUID id is not looked up (it names nothing),
 * and another organization's row, or one `visible` refuses, is not found either.
 */
export async function findOwned<Row>(
  actor: Actor,
  what: string,
  id: string,
  find: (where: { id: string; organization_id: string }) => Promise<Row | null>,
  visible: (row: Row) => boolean = () => true,
): Promise<Row> {
  const row = isUuid(id) ? await find({ id: id.toLowerCase(), ...tenantWhere(actor) }) : null;
  if (!row || !visible(row)) throw new NotFound(`${what} ${id}`);
  return row;
}

/**
 * The caller's organization's workspace with this UUID or slug; 404 otherwise, including for another
 * organization's workspace and a deleted one. A non-UUID string is only compared with slugs, never with the uuid column.
 */
export async function resolveWorkspace(db: Reader, actor: Actor, ref: string): Promise<Workspace> {
  // Slugs are never UUID-shaped (WorkspaceSlugSchema), so the two forms cannot collide.
  const where: Prisma.WorkspaceWhereInput = isUuid(ref)
    ? { ...tenantWhere(actor), id: ref.toLowerCase(), deleted_at: null }
    : { ...tenantWhere(actor), slug: ref, deleted_at: null };
  const workspace = await db.workspace.findFirst({ where });
  if (!workspace) throw new NotFound(`workspace ${ref}`);
  return workspace;
}

/** The workspace a tenant names (UUID or slug), or its key's own workspace when it names none. */
export function resolveWorkspaceOrOwn(db: Reader, actor: Actor, ref: string | undefined): Promise<Workspace> {
  return resolveWorkspace(db, actor, ref ?? actor.workspaceId);
}

/** Whether the caller may look into this workspace: management keys any of their organization's, others their own. */
export function canSeeWorkspace(actor: Actor, workspaceId: string): boolean {
  return readsOrganization(actor) || actor.workspaceId === workspaceId;
}

/** A regular key may only look into its own workspace (403); management keys see the whole organization. */
export function assertWorkspaceAccess(actor: Actor, workspaceId: string): void {
  if (!canSeeWorkspace(actor, workspaceId)) {
    throw new Forbidden(`key of workspace ${actor.workspaceId} asked for workspace ${workspaceId}`);
  }
}

/** The organization's default workspace id (exactly one per organization). */
export async function defaultWorkspaceId(db: Reader, actor: Actor): Promise<string> {
  const organization = await db.organization.findUniqueOrThrow({
    where: { id: actor.organizationId },
    select: { default_workspace_id: true },
  });
  if (!organization.default_workspace_id) throw new Error(`organization ${actor.organizationId} has no default workspace`);
  return organization.default_workspace_id;
}

/** The platform acting on an organization's data names it: its id, or 404. */
export async function platformOrganization(db: Reader, organizationId: string): Promise<Organization> {
  const organization = await db.organization.findUnique({ where: { id: organizationId } });
  if (!organization) throw new NotFound(`organization ${organizationId}`);
  return organization;
}

/** The platform acting in a workspace names it by UUID (slugs are only unique within an organization), or 404. */
export async function platformWorkspace(db: Reader, workspaceId: string): Promise<Workspace> {
  const workspace = isUuid(workspaceId) ? await db.workspace.findUnique({ where: { id: workspaceId.toLowerCase() } }) : null;
  if (!workspace || workspace.deleted_at) throw new NotFound(`workspace ${workspaceId}`);
  return workspace;
}

/**
 * As resolveWorkspace, for operations whose spec answers 403 when a tenant names another
 * organization's workspace (platform-api.md part 3: observability destinations): a UUID naming a
 * workspace of another organization is Forbidden; anything else not found stays NotFound. (A slug
 * is only unique within its organization, so it never names another organization's workspace.)
 */
export async function resolveWorkspaceOrForeign(db: Reader, actor: Actor, ref: string): Promise<Workspace> {
  try {
    return await resolveWorkspace(db, actor, ref);
  } catch (error) {
    if (error instanceof NotFound && isUuid(ref)) {
      const foreign = await db.workspace.findUnique({ where: { id: ref.toLowerCase() }, select: { organization_id: true } });
      if (foreign && foreign.organization_id !== actor.organizationId) throw new Forbidden(`workspace ${ref} belongs to another organization`);
    }
    throw error;
  }
}
