import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SwitchyardClient } from '@switchyard/client';
import type { Result } from './output.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** Shown in help, e.g. "<usd>". */
  value?: string;
  multiple?: boolean;
}

/** Where a command finds its secret: --<option>, then $<env>, then the file DATA_DIR/<file>. */
export interface Credential {
  option: string;
  env: string;
  file: string;
  /** e.g. "API key" (in help and errors). */
  describe: string;
}

/** The default: an organization's key (the server writes its first management key to DATA_DIR/admin-key). */
export const API_KEY: Credential = { option: 'key', env: 'SWITCHYARD_API_KEY', file: 'admin-key', describe: 'API key' };

/** The platform's key (the server writes it to DATA_DIR/platform-key on its first start). */
export const PLATFORM_KEY: Credential = {
  option: 'platform-key',
  env: 'SWITCHYARD_PLATFORM_KEY',
  file: 'platform-key',
  describe: 'platform key',
};

/**
 * A credential from its option, then its environment variable, then its file under DATA_DIR (which
 * the server writes on its first start).
 */
export function resolveCredential(
  credential: Credential,
  flag: string | undefined,
  io: { env: Record<string, string | undefined>; cwd: string },
): string | undefined {
  if (flag) return flag;
  const fromEnv = io.env[credential.env];
  if (fromEnv) return fromEnv;
  const file = path.resolve(io.cwd, io.env.DATA_DIR || '.data', credential.file);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
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
  /** The secret the command calls with (default API_KEY; another one adds its own --option). */
  credential?: Credential;
  run(ctx: CommandContext): Promise<Result>;
}

/** What a command that runs on the server's own machine (LocalCommand) gets: no client, no key. */
export interface LocalContext {
  options: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  /** A line of progress, for people (stderr: stdout stays the result). */
  progress(line: string): void;
}

/**
 * A command that does not call the API: it acts on the server's own database and store, with the
 * server's configuration (backup, restore). It takes no key.
 */
export interface LocalCommand {
  local: true;
  path: string[];
  summary: string;
  args?: string[];
  options?: Record<string, OptionSpec>;
  run(ctx: LocalContext): Promise<Result>;
}

export type AnyCommand = Command | LocalCommand;

/** A mistake in how the command was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** A failure that is not the server's answer (e.g. nothing matched): printed alone, exit code 1. */
export class CliError extends Error {}

export function requireString(ctx: Pick<CommandContext, 'options'>, name: string): string {
  const value = ctx.options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalString(ctx: Pick<CommandContext, 'options'>, name: string): string | undefined {
  const value = ctx.options[name];
  return typeof value === 'string' ? value : undefined;
}

/** A comma-separated option as its items (`--allowed-models a,b`), or undefined when not given. */
export function optionalList(ctx: Pick<CommandContext, 'options'>, name: string): string[] | undefined {
  const value = optionalString(ctx, name);
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
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

/** A key's SHA-256 hash (64 lowercase hex characters), or a prefix of one. */
const HASH_PREFIX = /^[0-9a-f]{1,64}$/;

/**
 * The full hash of the organization's one key whose hash starts with `prefix` (any unique prefix,
 * e.g. the 12 characters `keys list` shows; a full hash is taken as it is).
 */
export async function resolveKeyHash(ctx: CommandContext, prefix: string): Promise<string> {
  const wanted = prefix.toLowerCase();
  if (!HASH_PREFIX.test(wanted)) throw new UsageError(`"${prefix}" is not a key hash (hex characters)`);
  if (wanted.length === 64) return wanted;
  const found = await ctx.client.keys.list.query({ hash_prefix: wanted, include_disabled: true, limit: 100 });
  const count = found.data.length === 100 ? '100 or more' : String(found.data.length);
  if (found.data.length === 0) throw new CliError(`no key's hash starts with ${wanted}`);
  if (found.data.length > 1) throw new UsageError(`${count} keys' hashes start with ${wanted}: give more characters`);
  return found.data[0]!.hash;
}
