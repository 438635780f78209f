// Resolving a workspace named in a request (UUID or slug) within the caller's organization, and the
// rule that a regular key sees only its own workspace.
import type { Db, Prisma, Workspace } from '@switchyard/db';
import { UUID_PATTERN } from '@switchyard/schema';
import { Forbidden, NotFound } from '../../errors.js';
import type { Actor } from '../keys/auth.service.js';

type Reader = Db | Prisma.TransactionClient;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * The caller's organization's workspace with this UUID or slug; 404 otherwise, including for another
 * organization's workspace. A non-UUID string is only compared with slugs, never with the uuid column.
 */
export async function resolveWorkspace(db: Reader, actor: Actor, ref: string): Promise<Workspace> {
  // Slugs are never UUID-shaped (WorkspaceSlugSchema), so the two forms cannot collide.
  const where: Prisma.WorkspaceWhereInput = isUuid(ref)
    ? { organization_id: actor.organizationId, id: ref.toLowerCase() }
    : { organization_id: actor.organizationId, slug: ref };
  const workspace = await db.workspace.findFirst({ where });
  if (!workspace) throw new NotFound(`workspace ${ref}`);
  return workspace;
}

/** A regular key may only look into its own workspace; management keys see the whole organization. */
export function canSeeWorkspace(actor: Actor, workspaceId: string): boolean {
  return actor.key.is_management_key || actor.workspaceId === workspaceId;
}

/** canSeeWorkspace(), or 403. */
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
