// Reading the audit log: an organization's own entries (GET /api/v1/audit-logs), or, for the
// platform, every organization's (audit.platformList). Newest first, cursor-paged.
import { Prisma, rawRows, type Db } from '@switchyard/db';
import type { AuditEntry, AuditLogPage, ListAuditLogsInput, PlatformListAuditLogsInput } from '@switchyard/schema';
import { z } from 'zod';
import type { Actor, PlatformActor } from '../../access/callers.js';
import { tenantSql } from '../../access/tenancy.js';
import type { Uses } from '../../trpc/service-deps.js';
import { Invalid } from '../../lib/errors.js';

const ENTRY_ROW = z.object({
  id: z.string(),
  organization_id: z.string().nullable(),
  actor_kind: z.string(),
  actor_key_hash: z.string().nullable(),
  actor_label: z.string().nullable(),
  actor_user_id: z.string().nullable(),
  action: z.string(),
  target_type: z.string(),
  target_id: z.string().nullable(),
  changes: z.record(z.string(), z.unknown()),
  request_id: z.string().nullable(),
  client_address: z.string().nullable(),
  created_at: z.date(),
});
type EntryRow = z.output<typeof ENTRY_ROW>;

const COLUMNS = Prisma.sql`id::text AS id, organization_id, actor_kind, actor_key_hash, actor_label, actor_user_id, action, target_type, target_id,
  changes, request_id, client_address, created_at`;

function entryOf(row: EntryRow): AuditEntry {
  return {
    id: row.id,
    organization_id: row.organization_id,
    actor: { kind: row.actor_kind as AuditEntry['actor']['kind'], key_hash: row.actor_key_hash, label: row.actor_label, user_id: row.actor_user_id },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    changes: row.changes,
    request_id: row.request_id,
    client_address: row.client_address,
    created_at: row.created_at.toISOString(),
  } satisfies AuditEntry;
}

interface Position {
  created_at: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The opaque cursor of a page: where the next (older) page starts. */
function cursorOf(position: Position): string {
  return Buffer.from(`${position.created_at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

function positionOfCursor(cursor: string): Position {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|', 2);
  const created_at = new Date(at ?? '');
  if (!id || !UUID.test(id) || Number.isNaN(created_at.getTime()) || cursorOf({ created_at, id }) !== cursor) {
    throw new Invalid('cursor: not a cursor of this listing', { reason: 'bad cursor' });
  }
  return { created_at, id };
}

function filtersSql(input: ListAuditLogsInput): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (input.actor !== undefined) where.push(Prisma.sql`actor_key_hash = ${input.actor}`);
  if (input.action !== undefined) where.push(Prisma.sql`action = ${input.action}`);
  if (input.target_type !== undefined) where.push(Prisma.sql`target_type = ${input.target_type}`);
  if (input.target_id !== undefined) {
    if (input.target_type === undefined) throw new Invalid('target_id needs target_type', { reason: 'target_id without target_type' });
    where.push(Prisma.sql`target_id = ${input.target_id}`);
  }
  if (input.since !== undefined) where.push(Prisma.sql`created_at >= ${new Date(input.since).toISOString()}::timestamptz`);
  if (input.until !== undefined) where.push(Prisma.sql`created_at < ${new Date(input.until).toISOString()}::timestamptz`);
  if (input.cursor !== undefined) {
    const at = positionOfCursor(input.cursor);
    where.push(Prisma.sql`(created_at, id) < (${at.created_at.toISOString()}::timestamptz, ${at.id}::uuid)`);
  }
  return where;
}

async function page(db: Db, where: Prisma.Sql[], limit: number): Promise<AuditLogPage> {
  const condition = where.length > 0 ? Prisma.join(where, ' AND ') : Prisma.sql`true`;
  const rows = await rawRows(
    db,
    ENTRY_ROW,
    Prisma.sql`SELECT ${COLUMNS} FROM audit_log WHERE ${condition} ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`,
  );
  const more = rows.length > limit;
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data: data.map(entryOf), cursor: more && last ? cursorOf(last) : null };
}

/** GET /audit-logs: the caller's organization's entries only, newest first. */
export function listAuditLogs(deps: Uses<'db'>, actor: Actor, input: ListAuditLogsInput): Promise<AuditLogPage> {
  return page(deps.db, [tenantSql(actor), ...filtersSql(input)], input.limit);
}

/** audit.platformList (platform keys): every organization's entries and the platform's own, or one organization's. */
export function listAllAuditLogs(deps: Uses<'db'>, _actor: PlatformActor, input: PlatformListAuditLogsInput): Promise<AuditLogPage> {
  const where = filtersSql(input);
  if (input.organization_id !== undefined) where.unshift(tenantSql({ organizationId: input.organization_id }));
  return page(deps.db, where, input.limit);
}
