// switchyard destinations list|create|show|update|delete|secret|status: a workspace's observability
// destinations (platform-api.md D17-D21), a webhook destination's signing secret (tRPC) and how
// delivery to a destination is going (decision 0025).
import type { RouterOutputs } from '@switchyard/client';
import {
  optionalNumber,
  optionalString,
  pagination,
  paginationOptions,
  positional,
  requireString,
  UsageError,
  type Command,
  type CommandContext,
} from '../command.js';
import { renderRecord } from '../output.js';

type Destination = RouterOutputs['destinations']['get']['data'];

const rows = (destinations: Destination[]) =>
  destinations.map((d) => [d.id, d.type, d.name ?? '', d.enabled ? 'enabled' : 'disabled', d.delivery, d.regions.join(',')]);

const settingOptions = {
  name: { type: 'string', value: '<name>', description: 'a name for the destination' },
  config: {
    type: 'string',
    value: '<json>',
    description: "the type's config as a JSON object, camelCase keys (or env SWITCHYARD_DESTINATION_CONFIG, which keeps secrets out of shell history)",
  },
  disable: { type: 'boolean', description: 'enabled: false' },
  enable: { type: 'boolean', description: 'enabled: true' },
  'privacy-mode': { type: 'string', value: '<true|false>', description: 'never send request and response bodies, only metadata' },
  'sampling-rate': { type: 'string', value: '<rate>', description: '0.0001..1 (1: every event)' },
  regions: { type: 'string', value: '<list>', description: 'comma-separated: global, europe (or eu), us' },
  'key-hashes': { type: 'string', value: '<list>', description: "comma-separated hashes of the organization's keys (only their traffic); 'all' for every key" },
} as const;

function configOf(ctx: CommandContext): Record<string, unknown> | undefined {
  const text = optionalString(ctx, 'config') ?? ctx.env.SWITCHYARD_DESTINATION_CONFIG;
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError('--config must be a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--config must be a JSON object');
  return parsed as Record<string, unknown>;
}

function booleanOf(ctx: CommandContext, name: string): boolean | undefined {
  const value = optionalString(ctx, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
  return value === 'true';
}

/** The settings the options give (only those given). */
function settings(ctx: CommandContext) {
  if (ctx.options.enable === true && ctx.options.disable === true) throw new UsageError('--enable and --disable exclude each other');
  const regions = optionalString(ctx, 'regions');
  const hashes = optionalString(ctx, 'key-hashes');
  return {
    name: optionalString(ctx, 'name'),
    config: configOf(ctx),
    enabled: ctx.options.disable === true ? false : ctx.options.enable === true ? true : undefined,
    privacy_mode: booleanOf(ctx, 'privacy-mode'),
    sampling_rate: optionalNumber(ctx, 'sampling-rate'),
    regions: regions === undefined ? undefined : regions.split(',').map((r) => r.trim()),
    api_key_hashes: hashes === undefined ? undefined : hashes === 'all' ? null : hashes.split(',').map((h) => h.trim()),
  };
}

export const destinationsCommands: Command[] = [
  {
    path: ['destinations', 'list'],
    summary: "List a workspace's observability destinations (secrets masked)",
    options: { ...paginationOptions, workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' } },
    async run(ctx) {
      const page = await ctx.client.destinations.list.query({ ...pagination(ctx), workspace_id: optionalString(ctx, 'workspace') });
      return { json: page, human: { columns: ['id', 'type', 'name', 'status', 'delivery', 'regions'], rows: rows(page.data) } };
    },
  },
  {
    path: ['destinations', 'create'],
    summary: 'Create an observability destination (webhook destinations get a signing secret: destinations secret <id>)',
    options: {
      type: { type: 'string', value: '<type>', description: 'webhook, otel-collector, s3, or a hosted service (arize, datadog, langfuse, ...) (required)' },
      workspace: { type: 'string', value: '<workspace>', description: 'UUID or slug (default: the default workspace)' },
      ...settingOptions,
    },
    async run(ctx) {
      const { name, config, ...rest } = settings(ctx);
      const created = await ctx.client.destinations.create.mutate({
        // The server refuses an unknown type (400) with the list it takes.
        type: requireString(ctx, 'type') as Destination['type'],
        name: name ?? requireString(ctx, 'name'),
        config: config ?? {},
        workspace_id: optionalString(ctx, 'workspace'),
        ...rest,
      });
      return { json: created, human: renderRecord({ ...created.data }) };
    },
  },
  {
    path: ['destinations', 'show'],
    summary: 'Show one destination (secrets masked)',
    args: ['<id>'],
    async run(ctx) {
      const shown = await ctx.client.destinations.get.query({ id: positional(ctx, 0, '<id>') });
      return { json: shown, human: renderRecord({ ...shown.data }) };
    },
  },
  {
    path: ['destinations', 'update'],
    summary: 'Change the settings given; --config is partial (keys given replace stored ones; masked values are ignored)',
    args: ['<id>'],
    options: settingOptions,
    async run(ctx) {
      const updated = await ctx.client.destinations.update.mutate({ id: positional(ctx, 0, '<id>'), ...settings(ctx) });
      return { json: updated, human: renderRecord({ ...updated.data }) };
    },
  },
  {
    path: ['destinations', 'delete'],
    summary: 'Delete a destination: it stops receiving events at once; its secrets are destroyed',
    args: ['<id>'],
    async run(ctx) {
      const id = positional(ctx, 0, '<id>');
      const result = await ctx.client.destinations.delete.mutate({ id });
      return { json: result, human: `deleted ${id}` };
    },
  },
  {
    path: ['destinations', 'secret'],
    summary: "Print a webhook destination's signing secret (whsec_...); --rotate replaces it first",
    args: ['<id>'],
    options: { rotate: { type: 'boolean', description: 'generate a new secret (the old one stops verifying at once)' } },
    async run(ctx) {
      const id = positional(ctx, 0, '<id>');
      const result =
        ctx.options.rotate === true ? await ctx.client.destinations.rotateSecret.mutate({ id }) : await ctx.client.destinations.secret.query({ id });
      return { json: result, human: result.secret };
    },
  },
  {
    path: ['destinations', 'status'],
    summary: 'How delivery to a destination is going: deliveries pending, failing, delivered and dead, the last error, the last delivery',
    args: ['<id>'],
    async run(ctx) {
      const status = await ctx.client.destinations.status.query({ id: positional(ctx, 0, '<id>') });
      return { json: status, human: renderRecord({ ...status.data }) };
    },
  },
];
