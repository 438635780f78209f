import fs from 'node:fs/promises';
import path from 'node:path';
import type { RouterInputs } from '@switchyard/client';
import { optionalNumber, optionalString, PLATFORM_KEY, positional, UsageError, type Command, type OptionSpec } from '../command.js';
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

const modelColumns = ['id', 'name', 'context', 'prompt $/token', 'completion $/token'];
const modelRows = (models: { id: string; name: string; context_length: number; pricing: { prompt: string; completion: string } }[]) =>
  models.map((m) => [m.id, m.name, m.context_length, m.pricing.prompt, m.pricing.completion]);
const modalitiesOption: OptionSpec = {
  type: 'string',
  value: '<list>',
  description: 'output modalities, comma-separated (text, image, embeddings, audio, video...) or all; default text',
};

export const catalogCommands: Command[] = [
  {
    path: ['models', 'list'],
    summary: "List the catalog's models; --images and --videos: the image or video models with their parameters; --zdr: those with a ZDR endpoint",
    options: {
      images: { type: 'boolean', description: 'the models that output images (GET /images/models)' },
      videos: { type: 'boolean', description: 'the models that output video (GET /videos/models)' },
      zdr: { type: 'boolean', description: 'only models with a zero-data-retention endpoint' },
      modalities: modalitiesOption,
    },
    async run(ctx) {
      const { images, videos, zdr } = ctx.options;
      if (images === true && videos === true) throw new UsageError('--images and --videos are two lists: give one');
      if ((images === true || videos === true) && (zdr === true || ctx.options.modalities !== undefined)) {
        throw new UsageError('--zdr and --modalities filter the model list, not --images or --videos');
      }
      if (images === true) {
        const list = await ctx.client.models.images.query();
        const rows = list.data.map((m) => [m.id, m.name, m.supports_streaming ? 'yes' : 'no', Object.keys(m.supported_parameters).join(', ')]);
        return { json: list, human: { columns: ['id', 'name', 'streams', 'parameters'], rows } };
      }
      if (videos === true) {
        const list = await ctx.client.models.videos.query();
        const rows = list.data.map((m) => [m.id, m.name, m.supported_durations?.join(', '), m.supported_resolutions?.join(', '), m.generate_audio]);
        return { json: list, human: { columns: ['id', 'name', 'durations (s)', 'resolutions', 'audio'], rows } };
      }
      const list = await ctx.client.models.list.query({
        output_modalities: optionalString(ctx, 'modalities'),
        ...(zdr === true ? { zdr: 'true' as const } : {}),
      });
      return { json: list, human: { columns: modelColumns, rows: modelRows(list.data), footer: [`${list.total_count} model(s)`] } };
    },
  },
  {
    path: ['models', 'user'],
    summary: "List the models the key may use: the catalog as its guardrails (models, providers, ZDR) and its workspace's credentials see it",
    options: {
      modalities: modalitiesOption,
      limit: { type: 'string', value: '<n>', description: 'models per page (1..1000, default 500)' },
      offset: { type: 'string', value: '<n>', description: 'models to skip (default 0)' },
    },
    async run(ctx) {
      const page = await ctx.client.models.userModels.query({
        output_modalities: optionalString(ctx, 'modalities'),
        limit: optionalNumber(ctx, 'limit'),
        offset: optionalNumber(ctx, 'offset'),
      });
      return { json: page, human: { columns: modelColumns, rows: modelRows(page.data), footer: [`${page.total_count} model(s) the key may use`] } };
    },
  },
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
