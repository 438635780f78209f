// `switchyard analytics query`: POST /analytics/query from the command line (over tRPC).
import { optionalNumber, optionalString, requireString, UsageError, type Command } from '../command.js';

const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
const DAY = 24 * 3600 * 1000;
/** ISO 8601 with seconds, as the query takes it. */
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export const analyticsCommands: Command[] = [
  {
    path: ['analytics', 'query'],
    summary: "Query the organization's generations: metrics by dimensions and time buckets (management key)",
    options: {
      metric: { type: 'string', value: '<names>', description: 'metrics, comma-separated (required; see `analytics meta`)' },
      dimension: { type: 'string', value: '<names>', description: 'dimensions to group by, comma-separated' },
      granularity: { type: 'string', value: '<name>', description: 'time bucket: minute, hour, day, week or month (UTC)' },
      days: { type: 'string', value: '<n>', description: 'the last n days, up to now (default: the server’s, 30)' },
      start: { type: 'string', value: '<time>', description: 'start, ISO 8601 with seconds (instead of --days)' },
      end: { type: 'string', value: '<time>', description: 'end, ISO 8601 with seconds (default now)' },
      filter: { type: 'string', value: '<field:op:value>', description: 'one filter, e.g. model:eq:openai/gpt-4o or provider:in:openai|google' },
      'order-by': { type: 'string', value: '<field[:asc|desc]>', description: 'order of the rows' },
      limit: { type: 'string', value: '<n>', description: 'maximum rows (default 1000)' },
    },
    async run(ctx) {
      const metrics = list(requireString(ctx, 'metric'))!;
      const days = optionalNumber(ctx, 'days');
      const start = optionalString(ctx, 'start');
      if (days !== undefined && start !== undefined) throw new UsageError('give --days or --start, not both');
      const end = optionalString(ctx, 'end') ?? iso(new Date());
      const time_range = start !== undefined ? { start, end } : days !== undefined ? { start: iso(new Date(Date.parse(end) - days * DAY)), end } : undefined;
      const filterText = optionalString(ctx, 'filter');
      let filters;
      if (filterText !== undefined) {
        const [field, operator, ...rest] = filterText.split(':');
        if (!field || !operator || rest.length === 0) throw new UsageError('--filter takes <field>:<operator>:<value>');
        const value = rest.join(':');
        filters = [{ field, operator, value: operator === 'in' || operator === 'not_in' ? value.split('|') : value }];
      }
      const orderText = optionalString(ctx, 'order-by');
      const [orderField, direction = 'desc'] = orderText?.split(':') ?? [];
      if (direction !== 'asc' && direction !== 'desc') throw new UsageError('--order-by takes <field>[:asc|desc]');
      const answer = await ctx.client.analytics.query.mutate({
        metrics,
        dimensions: list(optionalString(ctx, 'dimension')),
        granularity: optionalString(ctx, 'granularity'),
        time_range,
        filters,
        order_by: orderField ? { field: orderField, direction } : undefined,
        limit: optionalNumber(ctx, 'limit') ?? 1000,
      });
      const rows = answer.data.data;
      const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
      const format = (value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toFixed(6)) : value);
      const notes = [
        `${answer.data.metadata.row_count} row(s)${answer.data.metadata.truncated ? ' (truncated)' : ''} in ${answer.data.metadata.query_time_ms} ms`,
        ...(answer.data.warnings ?? []).map((w) => `warning: ${w}`),
      ];
      const table = rows.length ? { columns, rows: rows.map((row) => columns.map((c) => format(row[c]))) } : undefined;
      return { json: answer, human: table ? { ...table, footer: notes } : notes.join('\n') };
    },
  },
  {
    path: ['analytics', 'meta'],
    summary: 'The metrics, dimensions, granularities and operators the query takes',
    async run(ctx) {
      const { data } = await ctx.client.analytics.meta.query();
      return {
        json: data,
        human: [
          `metrics:       ${data.metrics.map((m) => m.name).join(', ')}`,
          `dimensions:    ${data.dimensions.map((d) => d.name).join(', ')}`,
          `granularities: ${data.granularities.map((g) => g.name).join(', ')}`,
          `operators:     ${data.operators.map((o) => o.name).join(', ')}`,
        ].join('\n'),
      };
    },
  },
];
