// `switchyard`: the admin CLI. It does all its work through @switchyard/client, over tRPC.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createSwitchyardClient, SwitchyardError } from '@switchyard/client';
import { UsageError, type Command, type OptionSpec } from './command.js';
import { budgetCommands } from './commands/budgets.js';
import { byokCommands } from './commands/byok.js';
import { catalogCommands } from './commands/catalog.js';
import { demoCommands } from './commands/demo.js';
import { guardrailCommands } from './commands/guardrails.js';
import { keyCommands } from './commands/keys.js';
import { workspaceCommands } from './commands/workspaces.js';
import { render } from './output.js';

export const commands: Command[] = [
  ...keyCommands,
  ...workspaceCommands,
  ...budgetCommands,
  ...guardrailCommands,
  ...byokCommands,
  ...catalogCommands,
  ...demoCommands,
];

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

const globalOptions: Record<string, OptionSpec> = {
  url: { type: 'string', value: '<url>', description: `server URL (env SWITCHYARD_URL, default ${DEFAULT_URL})` },
  key: { type: 'string', value: '<key>', description: 'API key (env SWITCHYARD_API_KEY, else DATA_DIR/admin-key)' },
  json: { type: 'boolean', description: 'print JSON for scripts instead of tables' },
  help: { type: 'boolean', description: 'show help' },
};

function optionHelp(options: Record<string, OptionSpec>): string {
  const lines = Object.entries(options).map(([name, spec]) => [`--${name}${spec.value ? ` ${spec.value}` : ''}`, spec.description]);
  const width = Math.max(...lines.map(([flag]) => flag!.length));
  return lines.map(([flag, text]) => `  ${flag!.padEnd(width)}  ${text}`).join('\n');
}

function commandUsage(command: Command): string {
  const args = command.args?.length ? ` ${command.args.join(' ')}` : '';
  return [
    `Usage: switchyard ${command.path.join(' ')}${args} [options]`,
    '',
    command.summary,
    '',
    'Options:',
    optionHelp({ ...(command.options ?? {}), ...globalOptions }),
  ].join('\n');
}

function overview(prefix: string[] = []): string {
  const listed = commands.filter((c) => prefix.every((p, i) => c.path[i] === p));
  const width = Math.max(...listed.map((c) => c.path.join(' ').length));
  return [
    `Usage: switchyard ${prefix.length ? prefix.join(' ') + ' ' : ''}<command> [options]`,
    '',
    'Commands:',
    ...listed.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    optionHelp(globalOptions),
    '',
    'Run `switchyard <command> --help` for the options of a command.',
  ].join('\n');
}

function parseConfig(options: Record<string, OptionSpec>): ParseArgsConfig['options'] {
  return Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.multiple ? { multiple: true } : {}) }]),
  );
}

/** --key, SWITCHYARD_API_KEY, or the admin-key file the server writes on its first start. */
function resolveKey(flag: string | undefined, io: Io): string | undefined {
  if (flag) return flag;
  if (io.env.SWITCHYARD_API_KEY) return io.env.SWITCHYARD_API_KEY;
  const file = path.resolve(io.cwd, io.env.DATA_DIR || '.data', 'admin-key');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * Finds the command named by the leading words of argv (global options may come before them) and
 * returns argv without those words.
 */
function findCommand(argv: string[]): { command: Command; words: string[]; rest: string[] } {
  const words: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--url' || arg === '--key') i++;
    else if (arg.startsWith('-')) continue;
    else if (commands.some((c) => words.every((w, j) => c.path[j] === argv[w]) && c.path[words.length] === arg)) words.push(i);
    else break;
  }
  const named = words.map((i) => argv[i]!);
  const command = commands.find((c) => c.path.length === named.length && c.path.every((p, i) => named[i] === p));
  return { command: command!, words: named, rest: argv.filter((_, i) => !words.includes(i)) };
}

export async function run(argv: string[], io: Io): Promise<number> {
  const { command, words, rest } = findCommand(argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (!command) {
    const firstWord = argv.find((a) => !a.startsWith('-'));
    if (firstWord === undefined || (wantsHelp && words.length > 0)) {
      io.stdout(overview(words));
      return 0;
    }
    const typed = argv.filter((a) => !a.startsWith('-')).join(' ');
    io.stderr(`switchyard: unknown command "${typed}"\n\n${overview(words)}`);
    return 2;
  }
  if (wantsHelp) {
    io.stdout(commandUsage(command));
    return 0;
  }

  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: parseConfig({ ...(command.options ?? {}), ...globalOptions }),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.stderr(`switchyard: ${(error as Error).message}\n\n${commandUsage(command)}`);
    return 2;
  }
  const options = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const url = (options.url as string | undefined) ?? io.env.SWITCHYARD_URL ?? DEFAULT_URL;
  const apiKey = resolveKey(options.key as string | undefined, io);
  if (!apiKey) {
    io.stderr('switchyard: no API key: pass --key, set SWITCHYARD_API_KEY, or run where DATA_DIR/admin-key exists');
    return 2;
  }
  const client = createSwitchyardClient({ url, apiKey });
  try {
    const result = await command.run({ client, url, apiKey, options, positionals: parsed.positionals, env: io.env, cwd: io.cwd });
    io.stdout(render(result, options.json === true));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`switchyard: ${error.message}\n\n${commandUsage(command)}`);
      return 2;
    }
    if (error instanceof SwitchyardError) {
      const detail = error.metadata ? ` ${JSON.stringify(error.metadata)}` : '';
      io.stderr(
        error.status === 0
          ? `switchyard: cannot reach ${url}: ${(error.cause as Error | undefined)?.message ?? error.message}`
          : `switchyard: ${error.status} ${error.message}${detail}`,
      );
      return 1;
    }
    io.stderr(`switchyard: ${(error as Error).message}`);
    return 1;
  }
}
