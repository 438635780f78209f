// `switchyard`: the admin CLI. It does all its work through @switchyard/client, over tRPC.
// Parsing, help, --version and typo suggestions are commander's; each command is declared once as
// a `Command` (commands/*.ts) and turned into a commander command here.
import { readFileSync } from 'node:fs';
import { Command as Program, CommanderError, Help, Option } from 'commander';
import { createSwitchyardClient, SwitchyardError } from '@switchyard/client';
import { API_KEY, resolveCredential, UsageError, type AnyCommand, type Command, type Credential, type LocalCommand, type OptionSpec } from './command.js';
import { analyticsCommands } from './commands/analytics.js';
import { auditCommands } from './commands/audit.js';
import { backupCommands } from './commands/backup.js';
import { budgetCommands } from './commands/budgets.js';
import { byokCommands } from './commands/byok.js';
import { destinationsCommands } from './commands/destinations.js';
import { catalogCommands } from './commands/catalog.js';
import { demoCommands } from './commands/demo.js';
import { exportCommands } from './commands/export.js';
import { fileCommands } from './commands/files.js';
import { guardrailCommands } from './commands/guardrails.js';
import { keyCommands } from './commands/keys.js';
import { orgCommands } from './commands/orgs.js';
import { routeCommands } from './commands/route.js';
import { presetCommands } from './commands/presets.js';
import { scimCommands } from './commands/scim.js';
import { settingsCommands } from './commands/settings.js';
import { federationCommands } from './commands/federation.js';
import { identityProviderCommands } from './commands/identity-provider.js';
import { workspaceCommands } from './commands/workspaces.js';
import { render } from './output.js';

export const commands: AnyCommand[] = [
  ...keyCommands,
  ...workspaceCommands,
  ...budgetCommands,
  ...guardrailCommands,
  ...byokCommands,
  ...destinationsCommands,
  ...presetCommands,
  ...scimCommands,
  ...settingsCommands,
  ...federationCommands,
  ...identityProviderCommands,
  ...catalogCommands,
  ...demoCommands,
  ...orgCommands,
  ...routeCommands,
  ...analyticsCommands,
  ...auditCommands,
  ...fileCommands,
  ...backupCommands,
  ...exportCommands,
];

/** What `switchyard <group>` alone, or with --help, says about the group. */
const GROUPS: Record<string, string> = {
  keys: 'API keys: create, list, show, limit, rotate and disable them',
  workspaces: 'Workspaces and their members',
  budgets: "Workspaces' budgets",
  guardrails: 'Guardrails and their assignments',
  byok: 'Provider keys (BYOK), stored encrypted',
  presets: 'Presets and their versions',
  scim: "SCIM: group mappings, the directory's groups, SCIM tokens",
  tokens: 'SCIM bearer tokens: they authenticate /scim/v2 only',
  groups: 'SCIM groups provisioned by the identity provider',
  'federation-policies': 'Federation policies: workload tokens exchanged for access tokens (POST /oauth/token)',
  'identity-provider': "The organization's OpenID Connect provider, through which its people sign in to the console",
  models: 'The model catalog',
  generations: 'Recorded generations',
  orgs: 'Organizations (platform key)',
  settings: "The organization's own settings: its alert thresholds",
  analytics: "Analytics over the organization's generations",
  files: 'Workspace documents: upload files',
};

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** --url, else SWITCHYARD_URL, else the server's own PORT on this machine (as `pnpm start` reads it), else port 8080. */
export function serverUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  return flag || env.SWITCHYARD_URL || (env.PORT ? `http://127.0.0.1:${env.PORT}` : DEFAULT_URL);
}

export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The words after `switchyard`, e.g. "keys create". */
function commandPath(cmd: Program): string {
  const words: string[] = [];
  for (let c: Program | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

function leaves(cmd: Program): Program[] {
  return cmd.commands.flatMap((sub) => (sub.commands.length ? leaves(sub) : [sub]));
}

/**
 * Help that lists every command by its full path ("keys create"), at the top and in each group.
 * Only the help text is flattened: typo suggestions still compare a word with the commands at its
 * own level ("kyes" -> keys, "keys lsit" -> list).
 */
class SwitchyardHelp extends Help {
  private formatting = false;
  override formatHelp(cmd: Program, helper: Help): string {
    this.formatting = true;
    try {
      return super.formatHelp(cmd, helper);
    } finally {
      this.formatting = false;
    }
  }
  override visibleCommands(cmd: Program): Program[] {
    return this.formatting ? leaves(cmd) : super.visibleCommands(cmd);
  }
  override subcommandTerm(cmd: Program): string {
    const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}]`));
    return [commandPath(cmd), ...args].join(' ');
  }
}

function optionOf(name: string, spec: OptionSpec): Option {
  return new Option(`--${name}${spec.type === 'string' ? ` ${spec.value ?? '<value>'}` : ''}`, spec.description);
}

/** The option values by their --names (commander's own keys are camelCase). */
function optionValues(cmd: Program): Record<string, string | boolean | string[] | undefined> {
  const values = cmd.optsWithGlobals();
  const byName: Record<string, string | boolean | string[] | undefined> = {};
  for (let c: Program | null = cmd; c; c = c.parent) {
    for (const option of c.options) byName[option.name()] ??= values[option.attributeName()] as string | boolean | undefined;
  }
  return byName;
}

/**
 * Runs one command line. Exit codes: 0 done (or help/version shown), 1 the server refused or could
 * not be reached, 2 a mistake in the call (printed with the command's usage).
 */
export async function run(argv: string[], io: Io, list: AnyCommand[] = commands): Promise<number> {
  let code = 0;
  // commander writes errors and (for a missing subcommand) help to stderr; held until the outcome
  // is known, since help for `switchyard keys` alone belongs on stdout.
  const errors: string[] = [];
  const program = new Program('switchyard')
    .description('Administer a Switchyard server through its API (over tRPC, with @switchyard/client).')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--url <url>', `server URL (env SWITCHYARD_URL, else http://127.0.0.1:$PORT, default ${DEFAULT_URL})`)
    .option('--key <key>', `API key (env ${API_KEY.env}, else DATA_DIR/${API_KEY.file})`)
    .option('--json', 'print JSON for scripts instead of tables')
    .helpOption('-h, --help', 'show help')
    .addHelpCommand(false)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text.replace(/\n$/, '')),
      writeErr: (text) => void errors.push(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'switchyard: ')),
    });
  program.createHelp = () => Object.assign(new SwitchyardHelp(), program.configureHelp());
  program.configureHelp({ showGlobalOptions: true });

  for (const def of list) {
    let parent = program;
    for (const word of def.path.slice(0, -1)) {
      parent =
        parent.commands.find((c) => c.name() === word) ??
        parent
          .command(word)
          .description(GROUPS[word] ?? '')
          // A bare `switchyard keys` shows the group's help (see the catch below).
          .helpOption('-h, --help', 'show help');
    }
    const cmd = parent.command(def.path.at(-1)!).description(def.summary);
    for (const arg of def.args ?? []) cmd.argument(arg.replace(/>\.\.\.$/, '...>'));
    for (const [name, spec] of Object.entries(def.options ?? {})) cmd.addOption(optionOf(name, spec));
    if ('local' in def) {
      cmd.action(async () => {
        code = await executeLocal(def, cmd, io);
      });
      continue;
    }
    const credential = def.credential ?? API_KEY;
    if (credential !== API_KEY) {
      cmd.addOption(new Option(`--${credential.option} <key>`, `${credential.describe} (env ${credential.env}, else DATA_DIR/${credential.file})`));
    }
    cmd.action(async () => {
      code = await execute(def, cmd, credential, io);
    });
  }
  // Subcommands inherit the output, exit and help settings from the time they are created.
  for (const cmd of [program, ...program.commands, ...leaves(program)]) {
    cmd.exitOverride().showHelpAfterError().configureOutput(program.configureOutput());
    cmd.createHelp = program.createHelp;
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // `switchyard` or `switchyard keys` alone: commander shows the help as an error; here it is
    // what was asked for.
    const helpAsked = error.code === 'commander.help';
    if (errors.length) (helpAsked ? io.stdout : io.stderr)(errors.join('').replace(/\n$/, ''));
    // --help and --version exit 0 too.
    return helpAsked || error.exitCode === 0 ? 0 : 2;
  }
}

/** Reports a command's failure: usage mistakes with the usage (2), anything else alone (1). */
function failed(error: unknown, cmd: Program, io: Io): number {
  if (error instanceof UsageError) {
    io.stderr(`switchyard: ${error.message}\n\n${cmd.helpInformation().replace(/\n$/, '')}`);
    return 2;
  }
  io.stderr(`switchyard: ${(error as Error).message}`);
  return 1;
}

async function executeLocal(def: LocalCommand, cmd: Program, io: Io): Promise<number> {
  const options = optionValues(cmd);
  try {
    const result = await def.run({ options, positionals: cmd.args, env: io.env, cwd: io.cwd, progress: (line) => io.stderr(line) });
    io.stdout(render(result, options.json === true));
    return 0;
  } catch (error) {
    return failed(error, cmd, io);
  }
}

async function execute(def: Command, cmd: Program, credential: Credential, io: Io): Promise<number> {
  const options = optionValues(cmd);
  const url = serverUrl(options.url as string | undefined, io.env);
  const apiKey = resolveCredential(credential, options[credential.option] as string | undefined, io);
  if (!apiKey) {
    io.stderr(`switchyard: no ${credential.describe}: pass --${credential.option}, set ${credential.env}, or run where DATA_DIR/${credential.file} exists`);
    return 2;
  }
  const client = createSwitchyardClient({ url, apiKey });
  try {
    const result = await def.run({ client, url, apiKey, options, positionals: cmd.args, env: io.env, cwd: io.cwd });
    io.stdout(render(result, options.json === true));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`switchyard: ${error.message}\n\n${cmd.helpInformation().replace(/\n$/, '')}`);
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
