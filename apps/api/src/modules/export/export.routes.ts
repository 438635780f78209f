// GET /api/v1/export: the organization's export (docs/export.md), streamed as JSON Lines. The
// header line goes out with the answer's headers; each record follows as the client reads (pipeline:
// backpressure reaches the database reads, which run a page at a time only when the client wants
// more); the trailer with the counts comes last, so a file cut short by a failure or a client that
// left has none. A failure after the headers can only cut the connection (as for downloads).
// app.ts mounts it through rawRoutes().
import { API_PREFIX, answers, WHY } from '@switchyard/schema';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EXPORT_MEDIA_TYPE } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import { appendAudit, auditOfTenant } from '../audit/audit.js';
import { openExport } from './export.service.js';
import type { AppDeps } from '../../trpc/service-deps.js';
import { routeOf, type RawRoute } from '../../raw-routes/route.js';
import { NoQuerySchema, rawInputOf, type RawOperation } from '../../raw-routes/contracts.js';
import { requestIdOf, loggerOf } from '../../lib/request-scope.js';
import type { Request, Response } from 'express';

export const ORGANIZATION_EXPORT = {
  method: 'GET',
  prefix: API_PREFIX,
  path: '/export',
  input: NoQuerySchema,
  body: 'none',
  scope: 'export:read',
  statuses: answers({
    400: `a query parameter (it takes none); ${WHY.unstorable}`,
    403: WHY.managementOnly,
  }),
  // Not an operation of the spec (docs/export.md): the statuses it answers are the ones it lists.
  listed: [400, 401, 403, 500],
} as const satisfies RawOperation;

export const EXPORT_ROUTES: readonly RawRoute[] = [
  routeOf(ORGANIZATION_EXPORT, {
    access: 'management',
    doc: {
      operationId: 'export-organization',
      summary: "Export the organization's data",
      description:
        'JSON Lines (`application/x-ndjson`), streamed: a header line (`{"type":"export","format":"switchyard.export","version":1,...}`), ' +
        "then one record per line in the API's own shapes, each with its `type` (settings, workspace, member, workspace_member, key, budget, " +
        'guardrail, guardrail_key_assignment, guardrail_member_assignment, preset, generation with its stored content), then a trailer ' +
        '`{"type":"end","counts":{...}}`. A file without the trailer was cut short. No secret is ever in it. Management key with export:read ' +
        '(or unscoped). The format: docs/export.md.',
      tags: ['Export'],
      contentType: EXPORT_MEDIA_TYPE,
    },
    async handle(deps, req, res, actor) {
      rawInputOf(ORGANIZATION_EXPORT, req);
      await sendExport(deps, req, res, actor);
    },
  }),
];

async function sendExport(deps: AppDeps, req: Request, res: Response, actor: Actor): Promise<void> {
  const { startedAt, header, counts, records } = openExport(deps, actor);
  let completed = false;
  async function* lines() {
    yield `${JSON.stringify(header)}\n`;
    for await (const record of records) yield `${JSON.stringify(record)}\n`;
    yield `${JSON.stringify({ type: 'end', counts, completed_at: deps.now().toISOString() })}\n`;
    completed = true;
  }
  res.status(200);
  // attachment() sets a type from the file name's extension: the answer's own type goes after it.
  res.attachment(`switchyard-export-${actor.organizationId}-${startedAt.toISOString().replace(/[:.]/g, '-')}.jsonl`);
  res.setHeader('Content-Type', `${EXPORT_MEDIA_TYPE}; charset=utf-8`);
  res.setHeader('Cache-Control', 'private, no-store');
  const log = loggerOf(req, deps.logger);
  try {
    await pipeline(Readable.from(lines()), res);
  } catch (error) {
    res.destroy();
    log.warn({ err: error, client_gone: req.destroyed, counts }, 'export ended before its trailer');
  } finally {
    // A sensitive read: audited whether or not it finished, with what was sent.
    const audit = auditOfTenant(actor, {
      requestId: () => requestIdOf(req) ?? null,
      clientAddress: () => req.ip ?? req.socket.remoteAddress ?? null,
      now: () => deps.now(),
    });
    await appendAudit(deps.db, audit, {
      action: 'exports.create',
      targetType: 'organization',
      targetId: actor.organizationId,
      changes: { completed, counts },
    }).catch((error: unknown) => log.error({ err: error }, 'the export could not be audited'));
  }
}
