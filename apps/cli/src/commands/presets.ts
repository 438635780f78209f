import { pagination, paginationOptions, positional, type Command } from '../command.js';
import { renderRecord } from '../output.js';

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
];
