import type { SwitchyardClient } from '@switchyard/client';
import type { Result } from './output.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** Shown in help, e.g. "<usd>". */
  value?: string;
  multiple?: boolean;
}

export interface CommandContext {
  client: SwitchyardClient;
  /** The server URL and API key the client was made with (for the few calls that are not tRPC). */
  url: string;
  apiKey: string;
  options: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface Command {
  /** e.g. ["keys", "create"] */
  path: string[];
  summary: string;
  /** Positional arguments, e.g. ["<hash>"]. */
  args?: string[];
  options?: Record<string, OptionSpec>;
  run(ctx: CommandContext): Promise<Result>;
}

/** A mistake in how the command was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

export function requireString(ctx: CommandContext, name: string): string {
  const value = ctx.options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalString(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.options[name];
  return typeof value === 'string' ? value : undefined;
}

export function optionalNumber(ctx: CommandContext, name: string): number | undefined {
  const value = optionalString(ctx, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, not "${value}"`);
  return n;
}

export function positional(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.positionals[index];
  if (value === undefined) throw new UsageError(`missing ${name}`);
  return value;
}

export const paginationOptions: Record<string, OptionSpec> = {
  limit: { type: 'string', value: '<n>', description: 'records per page (1..100, default 50)' },
  offset: { type: 'string', value: '<n>', description: 'records to skip (default 0)' },
};

export function pagination(ctx: CommandContext) {
  return { limit: optionalNumber(ctx, 'limit') ?? 50, offset: optionalNumber(ctx, 'offset') ?? 0 };
}
