import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CliError, optionalString, positional, UsageError, type Command, type CommandContext } from '../command.js';
import { renderRecord } from '../output.js';

/**
 * POST /api/v1/files, the one call that is not tRPC: a multipart/form-data upload. The file is a
 * Blob over the file on disk (fs.openAsBlob), so fetch streams it from disk and never reads it
 * into memory whole.
 */
async function upload(ctx: CommandContext, file: string, workspace: string | undefined): Promise<Record<string, unknown>> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new UsageError(`${file} is not a file`);
  const form = new FormData();
  form.append('file', await openAsBlob(file), path.basename(file));
  const url = new URL(`${ctx.url.replace(/\/$/, '')}/api/v1/files`);
  if (workspace !== undefined) url.searchParams.set('workspace_id', workspace);
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${ctx.apiKey}` }, body: form });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    throw new CliError(`cannot reach ${ctx.url}: ${cause?.message ?? (error as Error).message}`);
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (!res.ok) {
    const error = (body?.error ?? {}) as { message?: string; metadata?: unknown };
    const detail = error.metadata ? ` ${JSON.stringify(error.metadata)}` : '';
    throw new CliError(`${res.status} ${error.message ?? res.statusText}${detail}`);
  }
  if (!body) throw new CliError(`${res.status}: the server answered no JSON`);
  return body;
}

export const fileCommands: Command[] = [
  {
    path: ['files', 'upload'],
    summary: "Upload a file into a workspace's documents (type detected from its content)",
    args: ['<path>'],
    options: {
      workspace: { type: 'string', value: '<workspace>', description: "workspace UUID or slug (default: the key's own)" },
    },
    async run(ctx) {
      const file = await upload(ctx, positional(ctx, 0, '<path>'), optionalString(ctx, 'workspace'));
      return { json: file, human: renderRecord(file) };
    },
  },
];
