// The organization export (docs/export.md, decision 0031): every record of the
// caller's organization that its operations answer with, as a stream of records in the API's own
// shapes. The records are read page by page (never the whole organization at once) through the
// same services the list operations use, so an export shows exactly what the API shows and filters
// by tenant exactly as they do; generations, the one table that grows without bound, are read by
// keyset pages of their own. The stream is pulled: a page is read only when the reader wants more,
// and a reader that stops (the client left) stops the reads after the page in flight.
import type { Db, Generation as GenerationRow, GenerationContent as GenerationContentRow, Prisma } from '@switchyard/db';
import { EXPORT_FORMAT, EXPORT_RECORD_TYPES, EXPORT_VERSION, type ExportCounts, type ExportRecord, type ExportRecordType } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import type { Uses } from '../../trpc/service-deps.js';
import { generationWhere, tenantData, viewerOf } from '../../access/tenancy.js';
import { listBudgets } from '../budgets/budgets.service.js';
import { generationContentOf, generationOf } from '../generations/generations-rows.js';
import { listAllGuardrailKeyAssignments, listAllGuardrailMemberAssignments, listGuardrails } from '../guardrails/guardrails.service.js';
import { listKeys } from '../keys/keys.service.js';
import { listOrganizationMembers } from '../members/members.service.js';
import { listPresets, listPresetVersions } from '../presets/presets.service.js';
import { getAlertSettings } from '../settings/alerts.service.js';
import { getRetention } from '../settings/retention.service.js';
import { listWorkspaceMembers, listWorkspaces } from '../workspaces/workspaces.service.js';

/** Records per page of the list services (their largest page). */
const PAGE = 100;
/**
 * Generations per page, with their content: what one page holds in memory at most. 200 rows with
 * a few KB of content each is well under a MB; the bound is the stored content's own size.
 */
export const GENERATION_PAGE = 200;

/** The first line of a file. */
function exportHeader(actor: Actor, startedAt: Date) {
  return {
    type: 'export',
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    // The organization the file is of (the tenancy helper writes the field, as for a row).
    ...tenantData(actor),
    created_at: startedAt.toISOString(),
  } as const;
}

/** Counts with every record type at 0. */
function emptyCounts(): ExportCounts {
  return Object.fromEntries(EXPORT_RECORD_TYPES.map((type) => [type, 0])) as ExportCounts;
}

/** Every page of an offset-paged list, one at a time. */
async function* pages<Item>(read: (window: { offset: number; limit: number }) => Promise<{ data: Item[] }>): AsyncGenerator<Item> {
  for (let offset = 0; ; offset += PAGE) {
    const { data } = await read({ offset, limit: PAGE });
    yield* data;
    if (data.length < PAGE) return;
  }
}

/** An export as it starts: its header line, and its records as they are read, counted as they go. */
export interface OrganizationExport {
  /** When it started (deps.now()): the header's created_at; it bounds the generations. */
  startedAt: Date;
  /** The first line of the file. */
  header: ReturnType<typeof exportHeader>;
  /** Each record type's count of the records yielded so far (the trailer's counts once they are all read). */
  counts: ExportCounts;
  /** The records, read a page at a time as they are pulled; nothing is read before the first pull. */
  records: AsyncGenerator<ExportRecord>;
}

/**
 * GET /export: the caller's organization's export, starting now. Its records come in the order of
 * EXPORT_RECORD_TYPES, each counted in `counts` as it is yielded. `startedAt` bounds the
 * generations: those recorded after the export started are not in it (the file is of the
 * organization as of then, but for changes to the small tables made while it runs, which may or may
 * not be in it).
 */
export function openExport(deps: Uses<'db' | 'memberOrder' | 'now'>, actor: Actor): OrganizationExport {
  const startedAt = deps.now();
  const counts = emptyCounts();
  return { startedAt, header: exportHeader(actor, startedAt), counts, records: exportRecords(deps, actor, startedAt, counts) };
}

/** The organization's records (openExport), each counted in `counts` as it is yielded. */
async function* exportRecords(deps: Uses<'db' | 'memberOrder'>, actor: Actor, startedAt: Date, counts: ExportCounts): AsyncGenerator<ExportRecord> {
  const { db } = deps;
  const emit = <R extends ExportRecord>(record: R): R => {
    counts[record.type as ExportRecordType] += 1;
    return record;
  };

  // The alert settings and the content retention: one record (updated_at: the alerts' row's).
  const { content_retention_days } = (await getRetention(deps, actor)).data;
  yield emit({ type: 'settings', ...(await getAlertSettings(deps, actor)).data, content_retention_days });

  // Workspace ids only are kept (for the per-workspace records below): an organization has few.
  const workspaceIds: string[] = [];
  for await (const workspace of pages((window) => listWorkspaces(deps, actor, window))) {
    workspaceIds.push(workspace.id);
    yield emit({ type: 'workspace', ...workspace });
  }
  for await (const member of pages((window) => listOrganizationMembers(deps, actor, window))) {
    yield emit({ type: 'member', ...member });
  }
  for (const id of workspaceIds) {
    for await (const membership of pages((window) => listWorkspaceMembers(deps, actor, { id, ...window }))) {
      yield emit({ type: 'workspace_member', ...membership });
    }
  }
  // Keys: their metadata as GET /keys shows it (never a secret: the hash is the key's public id), usage as of the start.
  const asOfStart = { db, now: () => startedAt };
  for (const id of workspaceIds) {
    for await (const key of pages(async (window) => ({
      data: await listKeys(asOfStart, actor, { workspace_id: id, include_disabled: true, ...window }),
    }))) {
      yield emit({ type: 'key', ...key });
    }
  }
  for (const id of workspaceIds) {
    for (const budget of (await listBudgets(deps, actor, { id })).budgets) yield emit({ type: 'budget', ...budget });
  }
  for (const id of workspaceIds) {
    for await (const guardrail of pages((window) => listGuardrails(deps, actor, { workspace_id: id, ...window }))) {
      yield emit({ type: 'guardrail', ...guardrail });
    }
  }
  for await (const assignment of pages((window) => listAllGuardrailKeyAssignments(deps, actor, window))) {
    yield emit({ type: 'guardrail_key_assignment', ...assignment });
  }
  for await (const assignment of pages((window) => listAllGuardrailMemberAssignments(deps, actor, window))) {
    yield emit({ type: 'guardrail_member_assignment', ...assignment });
  }
  for await (const preset of pages((window) => listPresets(deps, actor, window))) {
    const versions = [];
    for await (const version of pages((window) => listPresetVersions(deps, actor, { slug: preset.slug, ...window }))) versions.push(version);
    yield emit({ type: 'preset', ...preset, versions });
  }
  yield* generations(db, actor, startedAt, counts);
}

/**
 * The organization's generations recorded up to `startedAt`, oldest first, with their stored
 * content: keyset pages over (created_at, id), which the (organization_id, created_at) index
 * serves, so each page costs the same however far into the organization's history it is.
 */
async function* generations(db: Db, actor: Actor, startedAt: Date, counts: ExportCounts): AsyncGenerator<ExportRecord> {
  let after: { created_at: Date; id: string } | null = null;
  for (;;) {
    const keyset: Prisma.GenerationWhereInput = after
      ? { OR: [{ created_at: { gt: after.created_at } }, { created_at: after.created_at, id: { gt: after.id } }] }
      : {};
    const rows: Array<GenerationRow & { content: GenerationContentRow | null }> = await db.generation.findMany({
      where: { AND: [generationWhere(viewerOf(actor)), { created_at: { lte: startedAt } }, keyset] },
      include: { content: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      take: GENERATION_PAGE,
    });
    for (const row of rows) {
      counts.generation += 1;
      yield { type: 'generation', ...generationOf(row), content: row.content ? generationContentOf(row.content) : null };
    }
    if (rows.length < GENERATION_PAGE) return;
    const last = rows.at(-1)!;
    after = { created_at: last.created_at, id: last.id };
  }
}
