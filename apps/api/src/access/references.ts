// Identifiers a tenant names in a filter (analytics): resolved within the caller's organization
// only, so a key hash, workspace or user of another organization resolves to nothing.
import type { Db } from '@switchyard/db';
import type { Actor } from './callers.js';
import { tenantWhere, visibleRows } from './tenancy.js';
import { isUuid } from './workspaces.js';

export type ReferenceKind = 'api_key' | 'workspace' | 'user';

/** Each value that names one of the organization's keys (hash or id), workspaces (UUID or slug) or members (user id), mapped to its id. */
export async function resolveReferences(db: Db, actor: Actor, kind: ReferenceKind, values: string[]): Promise<Map<string, string>> {
  const scope = visibleRows(actor);
  const uuids = values.filter(isUuid).map((v) => v.toLowerCase());
  const found = new Map<string, string>();
  if (values.length === 0) return found;
  if (kind === 'api_key') {
    const keys = await db.apiKey.findMany({
      where: { ...scope, OR: [{ hash: { in: values.map((v) => v.toLowerCase()) } }, { id: { in: uuids } }] },
      select: { id: true, hash: true },
    });
    for (const v of values) {
      const key = keys.find((k) => k.hash === v.toLowerCase() || k.id === v.toLowerCase());
      if (key) found.set(v, key.id);
    }
  } else if (kind === 'workspace') {
    const workspaces = await db.workspace.findMany({
      where: {
        ...tenantWhere(actor),
        ...(scope.workspace_id ? { id: scope.workspace_id } : {}),
        OR: [{ id: { in: uuids } }, { slug: { in: values } }],
      },
      select: { id: true, slug: true },
    });
    for (const v of values) {
      const workspace = workspaces.find((w) => w.id === v.toLowerCase() || w.slug === v);
      if (workspace) found.set(v, workspace.id);
    }
  } else {
    const members = await db.organizationMember.findMany({
      where: { ...tenantWhere(actor), user_id: { in: values } },
      select: { user_id: true },
    });
    for (const m of members) found.set(m.user_id, m.user_id);
  }
  return found;
}
