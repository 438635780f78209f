import fs from 'node:fs/promises';
import path from 'node:path';
import type { RouterInputs } from '@switchyard/client';
import { PLATFORM_KEY, positional, UsageError, type Command } from '../command.js';
import { renderRecord } from '../output.js';

type Catalog = RouterInputs['models']['import'];

export async function readCatalog(file: string): Promise<Catalog> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Catalog;
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

export const catalogCommands: Command[] = [
  {
    path: ['models', 'import'],
    summary: 'Import a catalog file ({ "models": [...] }): all of it, or nothing (platform key)',
    args: ['<file.json>'],
    credential: PLATFORM_KEY,
    async run(ctx) {
      const catalog = await readCatalog(path.resolve(ctx.cwd, positional(ctx, 0, '<file.json>')));
      const result = await ctx.client.models.import.mutate(catalog);
      return { json: result, human: renderRecord({ ...result }) };
    },
  },
  {
    path: ['generations', 'show'],
    summary: 'Show a generation (with --content, its stored prompt and completion)',
    args: ['<id>'],
    options: { content: { type: 'boolean', description: 'also show the stored content' } },
    async run(ctx) {
      const id = positional(ctx, 0, '<id>');
      const generation = await ctx.client.generations.get.query({ id });
      const content = ctx.options.content === true ? await ctx.client.generations.content.query({ id }) : undefined;
      const json = content ? { ...generation, content: content.data } : generation;
      const human = renderRecord({ ...generation.data }) + (content ? `\n\n${JSON.stringify(content.data, null, 2)}` : '');
      return { json, human };
    },
  },
];
