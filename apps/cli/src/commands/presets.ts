import fs from 'node:fs/promises';
import path from 'node:path';
import type { RouterInputs } from '@switchyard/client';
import { pagination, paginationOptions, positional, requireString, UsageError, type Command, type CommandContext } from '../command.js';
import { renderRecord } from '../output.js';

/** The request kinds of `presets from-request` and the operation each one calls (D6, D7, D8). */
const KINDS = ['chat', 'messages', 'responses'] as const;
type Kind = (typeof KINDS)[number];

/** A JSON file holding one object: an inference request body. */
async function readBody(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new UsageError(`${file} must hold a JSON object (a request body)`);
  return body as Record<string, unknown>;
}

/** Sends the body to the kind's operation; the server checks it (400 names a bad field) and keeps what a version can hold. */
function fromRequest(ctx: CommandContext, kind: Kind, slug: string, body: Record<string, unknown>) {
  const { presets } = ctx.client;
  switch (kind) {
    case 'chat':
      return presets.fromChat.mutate({ ...body, slug } as RouterInputs['presets']['fromChat']);
    case 'messages':
      return presets.fromMessages.mutate({ ...body, slug } as RouterInputs['presets']['fromMessages']);
    case 'responses':
      return presets.fromResponses.mutate({ ...body, slug } as RouterInputs['presets']['fromResponses']);
  }
}

export const presetCommands: Command[] = [
  {
    path: ['presets', 'list'],
    summary: 'List presets, most recently updated first',
    options: paginationOptions,
    async run(ctx) {
      const page = await ctx.client.presets.list.query(pagination(ctx));
      const rows = page.data.map((p) => [p.slug, p.name, p.status, p.updated_at]);
      return { json: page, human: { columns: ['slug', 'name', 'status', 'updated_at'], rows } };
    },
  },
  {
    path: ['presets', 'show'],
    summary: 'Show a preset with its version in force, or one version of it',
    args: ['<slug>', '[version]'],
    async run(ctx) {
      const slug = positional(ctx, 0, '<slug>');
      const version = ctx.positionals[1];
      if (version !== undefined) {
        const { data } = await ctx.client.presets.version.query({ slug, version });
        return { json: data, human: data ? renderRecord({ ...data }) : `version ${version} of ${slug} was deleted` };
      }
      const { data } = await ctx.client.presets.get.query({ slug });
      return { json: data, human: renderRecord({ ...data }) };
    },
  },
  {
    path: ['presets', 'from-request'],
    summary: 'Create a preset, or its next version, from an inference request body (nothing is run)',
    args: ['<slug>'],
    options: {
      kind: { type: 'string', value: '<chat|messages|responses>', description: 'the body is a chat-completions, messages or responses request' },
      file: { type: 'string', value: '<body.json>', description: 'the JSON request body' },
    },
    async run(ctx) {
      const slug = positional(ctx, 0, '<slug>');
      const kind = requireString(ctx, 'kind');
      if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${KINDS.join(', ')}`);
      const body = await readBody(path.resolve(ctx.cwd, requireString(ctx, 'file')));
      const { data } = await fromRequest(ctx, kind as Kind, slug, body);
      const version = data.designated_version;
      const human = renderRecord({
        slug: data.slug,
        workspace_id: data.workspace_id,
        version: version?.version,
        config: version?.config,
        system_prompt: version?.system_prompt,
      });
      return { json: data, human };
    },
  },
];
