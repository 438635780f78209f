// `switchyard demo`: fills the caller's organization with sample data, through @switchyard/client
// only, so that every one of the 21 operations has something to answer. Safe to run again: what
// should be unique (users, the demo workspace, budgets, BYOK credential, guardrails, preset, SCIM
// mapping, container files, video job) is looked up first and created only when missing. Each run
// adds one new regular key with its own generations (the key's secret is shown only once, so a
// script needs a fresh one).
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createSwitchyardClient, SAMPLE_VIDEO_URL, SwitchyardError, writeContainerFile, type RouterInputs, type SwitchyardClient } from '@switchyard/client';
import { optionalNumber, optionalString, PLATFORM_KEY, resolveCredential, UsageError, type Command, type CommandContext } from '../command.js';
import { readCatalog } from './catalog.js';

/** What a script needs to call every operation of the contract: keys, ids and names to pass. */
export interface DemoSummary {
  management_key: string;
  key: string;
  organization_id: string;
  workspace_id: string;
  workspace_slug: string;
  user_ids_not_in_workspace: string[];
  model: string;
  model_variant: string;
  model_alias: string;
  generation_id: string;
  byok_id: string;
  guardrail_id: string;
  preset_slug: string;
  scim_mapping_id: string;
  container_id: string;
  container_file_id: string;
  video_job_id: string;
}

type CatalogModel = RouterInputs['models']['import']['models'][number];

/**
 * The default catalog: the repository's demo/catalog.json when this runs from a checkout (src/ or
 * dist/ of apps/cli, below the workspace root), else the copy the build keeps beside dist/ (an
 * installed CLI: a `pnpm deploy` folder or a packed tarball).
 */
function defaultCatalog(): string {
  const checkout = new URL('../../../../', import.meta.url);
  const candidates = [
    ...(existsSync(new URL('pnpm-workspace.yaml', checkout)) ? [new URL('demo/catalog.json', checkout)] : []),
    new URL('../demo-catalog.json', import.meta.url),
  ].map((url) => fileURLToPath(url));
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new UsageError(`no demo catalog at ${candidates.join(' or ')}: pass --catalog <file.json> (demo/catalog.json of the repository)`);
  return found;
}
const EMAIL_DOMAIN = 'demo.switchyard.dev';
const WORKSPACE = { slug: 'demo-team', name: 'Demo team', description: 'Sample data made by `switchyard demo`' };
const PEOPLE = [
  { email: `ada@${EMAIL_DOMAIN}`, first_name: 'Ada', last_name: 'Lovelace', role: 'org:admin', inWorkspace: true },
  { email: `grace@${EMAIL_DOMAIN}`, first_name: 'Grace', last_name: 'Hopper', role: 'org:member', inWorkspace: true },
  // Stays out of the demo workspace, so that adding members has someone to add.
  { email: `alan@${EMAIL_DOMAIN}`, first_name: 'Alan', last_name: 'Turing', role: 'org:member', inWorkspace: false },
] as const;
/** Widest first: each must stay strictly below every wider one. */
const BUDGETS: Omit<RouterInputs['budgets']['set'], 'workspace_ref'>[] = [
  { interval: 'lifetime', limit_usd: 1000 },
  { interval: 'monthly', limit_usd: 150 },
  { interval: 'weekly', limit_usd: 50 },
  { interval: 'daily', limit_usd: 10 },
];
const BYOK_NAME = 'Demo OpenAI key';
const GUARDRAILS: RouterInputs['guardrails']['create'][] = [
  {
    name: 'Demo: no preview models',
    description: 'Keeps demo traffic off preview and reasoning-heavy models.',
    ignored_models: ['openai/o3', 'anthropic/claude-opus-4'],
    limit_usd: 25,
    reset_interval: 'monthly',
  },
  {
    name: 'Demo: daily spend cap',
    description: 'A small daily cap, open-weight providers only.',
    allowed_providers: ['deepinfra', 'together', 'groq'],
    enforce_zdr: true,
    limit_usd: 5,
    reset_interval: 'daily',
  },
];
const PRESET = {
  slug: 'demo-assistant',
  name: 'Demo assistant',
  versions: [
    { config: { model: 'openai/gpt-4o-mini', temperature: 0.7 }, system_prompt: 'You are a helpful assistant.' },
    { config: { model: 'openai/gpt-4o', temperature: 0.5 }, system_prompt: 'You are a concise, helpful assistant.' },
    { config: { model: 'anthropic/claude-sonnet-4', temperature: 0.3, max_tokens: 1024 }, system_prompt: 'Answer briefly and cite sources.' },
  ],
};
/** A fixed group id, so that a second run finds the mapping of the first. */
const SCIM_GROUP_ID = '5c1b0d2e-7a4f-4e8b-9d3a-2f6e8c1a0b7d';
const CONTAINER_SESSION = 'demo-session';
const CONTAINER_FILES = [
  { path: 'report.md', content_type: 'text/markdown', body: '# Weekly report\n\nRequests are up 12% week over week.\n' },
  { path: 'data/results.csv', content_type: 'text/csv', body: 'model,requests,usage_usd\nopenai/gpt-4o,120,1.84\nanthropic/claude-sonnet-4,64,1.12\n' },
  {
    path: 'chart.svg',
    content_type: 'image/svg+xml',
    body: '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40"><rect x="5" y="10" width="10" height="30"/><rect x="25" y="5" width="10" height="35"/><rect x="45" y="20" width="10" height="20"/></svg>\n',
  },
];
const VIDEO_JOB = { provider: 'demo', model: 'demo/sample-video', upstream_job_id: 'demo-video-1', prompt: 'A test pattern, one second long' };
const GENERATIONS = 200;
const GENERATION_DAYS = 40;
const CONCURRENCY = 8;
const KEY_MONTHLY_LIMIT = 100;
/** The credit balance the demo leaves at least, so that GET /generation does not answer 402. */
const MIN_CREDIT_BALANCE = 100;

const PROMPTS = [
  [
    'Summarise the plot of Hamlet in two sentences.',
    'Prince Hamlet seeks revenge on his uncle Claudius, who murdered his father to seize the throne. His hesitation and feigned madness lead to a tragedy that leaves almost everyone dead.',
  ],
  ['Write a haiku about a freight yard at dawn.', 'Cold rails catch the light\nwagons wait in patient rows\nthe first switch clicks over'],
  ['What is the capital of Australia?', 'The capital of Australia is Canberra.'],
  ['Translate "good morning" into French and Spanish.', 'French: "Bonjour". Spanish: "Buenos días".'],
  ['Explain what an idempotent HTTP method is.', 'A method is idempotent when repeating a request has the same effect as making it once, e.g. PUT or DELETE.'],
  ['Give me a SQL query that counts orders per day.', "SELECT date_trunc('day', created_at) AS day, count(*) FROM orders GROUP BY 1 ORDER BY 1;"],
  ['Name three sorting algorithms and their average complexity.', 'Quicksort O(n log n), merge sort O(n log n), insertion sort O(n^2).'],
  ['Suggest a name for a model-routing service.', 'Switchyard: it sends each request down the right track.'],
] as const;

/** Every page of a paginated list. */
async function all<T>(list: (page: { offset: number; limit: number }) => Promise<{ data: T[]; total_count: number }>): Promise<T[]> {
  const items: T[] = [];
  for (;;) {
    const page = await list({ offset: items.length, limit: 100 });
    items.push(...page.data);
    if (page.data.length < 100 || items.length >= page.total_count) return items;
  }
}

/** Runs `task` over `items` with at most `limit` calls in flight. */
async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const isNotFound = (error: unknown) => error instanceof SwitchyardError && error.status === 404;

function catalogPicks(models: CatalogModel[]) {
  const withVariant = models.find((m) => m.variants?.length);
  const withAlias = models.find((m) => m.aliases?.length);
  if (!withVariant || !withAlias) throw new UsageError('the catalog needs a model with a variant and one with an alias');
  const chat = models.filter((m) => m.architecture.output_modalities.includes('text'));
  if (chat.length === 0) throw new UsageError('the catalog needs a chat model');
  return {
    model: chat[0]!.id,
    /** A variant id such as openai/gpt-oss-20b:free (priced at zero: free-model requests). */
    model_variant: `${withVariant.id}:${withVariant.variants![0]!.variant}`,
    model_alias: withAlias.aliases![0]!,
    chat,
  };
}

async function ensureMembers(client: SwitchyardClient) {
  const members = await all((page) => client.organization.members.query(page));
  const byEmail = new Map(members.map((m) => [m.email.toLowerCase(), m]));
  const people = [];
  for (const person of PEOPLE) {
    const { inWorkspace, ...input } = person;
    const member = byEmail.get(person.email) ?? (await client.organization.createMember.mutate(input));
    people.push({ ...member, inWorkspace });
  }
  return people;
}

async function ensureWorkspace(client: SwitchyardClient) {
  const workspaces = await all((page) => client.workspaces.list.query(page));
  return workspaces.find((w) => w.slug === WORKSPACE.slug) ?? (await client.workspaces.create.mutate(WORKSPACE)).data;
}

/** Organization members not in the workspace; a new newcomer when everyone already is. */
async function membersOutside(client: SwitchyardClient, workspaceId: string): Promise<string[]> {
  const [members, inside] = await Promise.all([
    all((page) => client.organization.members.query(page)),
    all((page) => client.workspaces.members.query({ id: workspaceId, ...page })),
  ]);
  const insideIds = new Set(inside.map((m) => m.user_id));
  const outside = members.filter((m) => !insideIds.has(m.id)).map((m) => m.id);
  if (outside.length > 0) return outside.slice(0, 100);
  const taken = new Set(members.map((m) => m.email.toLowerCase()));
  let n = 1;
  while (taken.has(`newcomer-${n}@${EMAIL_DOMAIN}`)) n++;
  const newcomer = await client.organization.createMember.mutate({ email: `newcomer-${n}@${EMAIL_DOMAIN}`, first_name: 'New', last_name: `Comer ${n}` });
  return [newcomer.id];
}

/**
 * About 200 generations of the key over the last 40 days: a few earlier today, the rest spread
 * evenly (so this month, this week and today all differ, except on the 1st of a month or a Monday).
 */
async function recordGenerations(client: SwitchyardClient, keyHash: string, picks: ReturnType<typeof catalogPicks>, now: Date) {
  const day = 24 * 3600 * 1000;
  const sinceMidnight = now.getTime() - Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const today = 5;
  const inputs = Array.from({ length: GENERATIONS }, (_, i) => {
    const age =
      i < today
        ? ((i + 1) * sinceMidnight) / (today + 1)
        : sinceMidnight + ((i - today + 0.5) / (GENERATIONS - today)) * (GENERATION_DAYS * day - sinceMidnight);
    const free = i % 17 === 3;
    const byok = i % 11 === 5;
    const model = free ? picks.model_variant : picks.chat[i % picks.chat.length]!;
    const modelId = typeof model === 'string' ? model : model.id;
    const [prompt, completion] = PROMPTS[i % PROMPTS.length]!;
    const tokensPrompt = 20 + randomInt(800);
    const tokensCompletion = 10 + randomInt(600);
    const cost = typeof model === 'string' ? 0 : tokensPrompt * Number(model.pricing.prompt) + tokensCompletion * Number(model.pricing.completion);
    const length = i % 13 === 7;
    return {
      id: `gen-demo-${keyHash.slice(0, 12)}-${String(i).padStart(3, '0')}`,
      api_key_hash: keyHash,
      model: modelId,
      created_at: new Date(now.getTime() - Math.round(age)).toISOString(),
      request_id: `req-demo-${keyHash.slice(0, 8)}-${i}`,
      provider_name: modelId.split('/')[0]!,
      router: 'default',
      api_type: 'completions',
      origin: 'https://demo.switchyard.dev',
      user_agent: 'switchyard-demo/1.0',
      data_region: 'global',
      service_tier: 'standard',
      finish_reason: length ? 'length' : 'stop',
      native_finish_reason: length ? 'max_tokens' : 'stop',
      streamed: i % 3 !== 0,
      is_byok: byok,
      latency: 150 + randomInt(900),
      generation_time: 400 + randomInt(4000),
      moderation_latency: randomInt(40),
      tokens_prompt: tokensPrompt,
      tokens_completion: tokensCompletion,
      native_tokens_prompt: tokensPrompt,
      native_tokens_completion: tokensCompletion,
      native_tokens_reasoning: 0,
      native_tokens_cached: i % 4 === 0 ? Math.floor(tokensPrompt / 2) : 0,
      num_fetches: 0,
      num_search_results: 0,
      total_cost: cost,
      // BYOK: the provider bills the customer's own key; the platform charges a 5% fee.
      usage: byok ? cost * 0.05 : cost,
      upstream_inference_cost: byok ? cost : null,
      content: { input: { messages: [{ role: 'user', content: prompt }] }, output: { completion, reasoning: null } },
    } satisfies RouterInputs['generations']['record'];
  });
  await pool(inputs, CONCURRENCY, (input) => client.generations.record.mutate(input));
  return { newest: inputs[0]!.id, spend: inputs.reduce((sum, g) => sum + g.usage, 0) };
}

/** Pays for this run's spend (billing, the platform), and tops the balance up to MIN_CREDIT_BALANCE when it is below. */
async function ensureCredits(platform: SwitchyardClient, organizationId: string, spend: number) {
  const add = (amount: number) => platform.generations.addCredits.mutate({ organization_id: organizationId, amount });
  let { credit_balance } = await add(Math.max(spend, 0.01));
  if (credit_balance < MIN_CREDIT_BALANCE) ({ credit_balance } = await add(MIN_CREDIT_BALANCE - credit_balance));
  return credit_balance;
}

async function ensureGuardrails(client: SwitchyardClient, workspaceId: string, keyHash: string, people: { id: string }[]) {
  const existing = await all((page) => client.guardrails.list.query({ workspace_id: workspaceId, ...page }));
  const guardrails = [];
  for (const spec of GUARDRAILS) {
    guardrails.push(existing.find((g) => g.name === spec.name) ?? (await client.guardrails.create.mutate({ workspace_id: workspaceId, ...spec })).data);
  }
  const [first, second] = guardrails;
  // Assignments skip what is already assigned. A key holds one guardrail: the demo key gets the first.
  await client.guardrails.assignKeys.mutate({ id: first!.id, key_hashes: [keyHash] });
  await client.guardrails.assignMembers.mutate({ id: first!.id, member_user_ids: people.slice(0, 2).map((p) => p.id) });
  await client.guardrails.assignMembers.mutate({ id: second!.id, member_user_ids: people.slice(2).map((p) => p.id) });
  return first!;
}

async function ensurePreset(client: SwitchyardClient, workspaceId: string) {
  let count = 0;
  try {
    count = (await client.presets.versions.query({ slug: PRESET.slug, offset: 0, limit: 1 })).total_count;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const [first] = PRESET.versions;
    await client.presets.create.mutate({ workspace_id: workspaceId, slug: PRESET.slug, name: PRESET.name, ...first! });
    count = 1;
  }
  for (const version of PRESET.versions.slice(count)) await client.presets.createVersion.mutate({ slug: PRESET.slug, ...version });
  return PRESET.slug;
}

async function ensureScimMapping(client: SwitchyardClient, workspaceId: string) {
  const mappings = await all((page) => client.scim.listGroupMappings.query(page));
  return (
    mappings.find((m) => m.scim_group_id === SCIM_GROUP_ID && m.workspace_id === workspaceId) ??
    (await client.scim.createGroupMapping.mutate({ workspace_id: workspaceId, scim_group_id: SCIM_GROUP_ID, role: 'member' })).data
  );
}

/** The sandbox runner's part (the platform): open the session's container and write its files. */
async function ensureContainer(platform: Platform, organizationId: string, workspaceId: string) {
  const { data: container } = await platform.client.files.openContainer.mutate({ session_key: CONTAINER_SESSION, workspace_id: workspaceId });
  // Writing replaces a file in place, so a second run leaves the same files.
  const files = [];
  for (const file of CONTAINER_FILES) {
    files.push(await writeContainerFile(platform.options, { organization_id: organizationId, container_id: container.container_id, ...file }));
  }
  return { container_id: container.container_id, file_id: files[0]!.file_id };
}

/** The video service's part (the platform) registers the job; the organization lists its jobs. */
async function ensureVideoJob(client: SwitchyardClient, platform: SwitchyardClient, workspaceId: string, videoUrl: string) {
  const jobs = await all((page) => client.videos.listJobs.query({ workspace_id: workspaceId, upstream_job_id: VIDEO_JOB.upstream_job_id, ...page }));
  const same = jobs.find((job) => job.outputs.length === 1 && job.outputs[0]!.upstream_url === videoUrl);
  if (same) return same;
  const { data } = await platform.videos.createJob.mutate({
    workspace_id: workspaceId,
    ...VIDEO_JOB,
    outputs: [{ upstream_url: videoUrl, media_type: 'video/mp4' }],
  });
  return data;
}

/** The platform's client, and what it was made with (for the byte upload, which is not tRPC). */
interface Platform {
  client: SwitchyardClient;
  options: { url: string; apiKey: string };
}

/** The demo plays the platform's services too (catalog, recording, billing, sandbox runner, video service): it needs the platform key. */
function platformOf(ctx: CommandContext): Platform {
  const apiKey = resolveCredential(PLATFORM_KEY, optionalString(ctx, PLATFORM_KEY.option), ctx);
  if (!apiKey) {
    throw new UsageError(
      `the demo also plays the platform's services: pass --${PLATFORM_KEY.option}, set ${PLATFORM_KEY.env}, or run where DATA_DIR/${PLATFORM_KEY.file} exists`,
    );
  }
  const options = { url: ctx.url, apiKey };
  return { client: createSwitchyardClient(options), options };
}

export async function runDemo(ctx: CommandContext): Promise<DemoSummary & { credit_balance: number; generations: number }> {
  const { client } = ctx;
  const platform = platformOf(ctx);
  const catalogFile = optionalString(ctx, 'catalog');
  const catalog = await readCatalog(catalogFile ? path.resolve(ctx.cwd, catalogFile) : defaultCatalog());
  // The default is the server's own sample, which it serves from its files (no network fetch).
  const videoUrl = optionalString(ctx, 'video-url') ?? SAMPLE_VIDEO_URL;

  const { data: caller } = await client.keys.current.query();
  const picks = catalogPicks(catalog.models);
  const organizationId = caller.organization_id;
  if (!organizationId) throw new UsageError("the demo needs an organization's management key (--key)");
  await platform.client.models.import.mutate(catalog);

  const people = await ensureMembers(client);
  const workspace = await ensureWorkspace(client);
  const members = await all((page) => client.workspaces.members.query({ id: workspace.id, ...page }));
  const wanted = [caller.creator_user_id, ...people.filter((p) => p.inWorkspace).map((p) => p.id)];
  const missing = wanted.filter((id) => !members.some((m) => m.user_id === id));
  if (missing.length > 0) await client.workspaces.addMembers.mutate({ id: workspace.id, user_ids: missing });
  for (const budget of BUDGETS) await client.budgets.set.mutate({ workspace_ref: workspace.id, ...budget });

  // A new key each run: owned by the caller's user, in the demo workspace, with a monthly limit
  // (--key-limit: a small one makes the recorded spend cross its alert thresholds, docs/events.md).
  const keyLimit = optionalNumber(ctx, 'key-limit') ?? KEY_MONTHLY_LIMIT;
  if (!(keyLimit > 0)) throw new UsageError('--key-limit must be a positive amount of USD');
  const created = await client.keys.create.mutate({
    name: `Demo key ${new Date().toISOString()}`,
    workspace_id: workspace.id,
    limit: keyLimit,
    limit_reset: 'monthly',
  });
  const generations = await recordGenerations(platform.client, created.data.hash, picks, new Date());
  const creditBalance = await ensureCredits(platform.client, organizationId, generations.spend);

  const byok =
    (await all((page) => client.byok.list.query({ workspace_id: workspace.id, ...page }))).find((c) => c.name === BYOK_NAME) ??
    (
      await client.byok.create.mutate({
        workspace_id: workspace.id,
        provider: 'openai',
        name: BYOK_NAME,
        // Not a real provider key: demo data only.
        key: `sk-demo-${Array.from({ length: 32 }, () => randomInt(16).toString(16)).join('')}`,
      })
    ).data;
  const guardrail = await ensureGuardrails(client, workspace.id, created.data.hash, [{ id: caller.creator_user_id }, ...people.filter((p) => p.inWorkspace)]);
  const presetSlug = await ensurePreset(client, workspace.id);
  const scim = await ensureScimMapping(client, workspace.id);
  const container = await ensureContainer(platform, organizationId, workspace.id);
  const video = await ensureVideoJob(client, platform.client, workspace.id, videoUrl);
  const outside = await membersOutside(client, workspace.id);

  return {
    management_key: ctx.apiKey,
    key: created.key,
    organization_id: organizationId,
    workspace_id: workspace.id,
    workspace_slug: workspace.slug,
    user_ids_not_in_workspace: outside,
    model: picks.model,
    model_variant: picks.model_variant,
    model_alias: picks.model_alias,
    generation_id: generations.newest,
    byok_id: byok.id,
    guardrail_id: guardrail.id,
    preset_slug: presetSlug,
    scim_mapping_id: scim.id,
    container_id: container.container_id,
    container_file_id: container.file_id,
    video_job_id: video.id,
    credit_balance: creditBalance,
    generations: GENERATIONS,
  };
}

export const demoCommands: Command[] = [
  {
    path: ['demo'],
    summary: "Fill the caller's organization with sample data (safe to run again); --json names what scripts need",
    options: {
      [PLATFORM_KEY.option]: {
        type: 'string',
        value: '<key>',
        description: `the platform key, for the platform's steps (env ${PLATFORM_KEY.env}, else DATA_DIR/${PLATFORM_KEY.file})`,
      },
      catalog: { type: 'string', value: '<file.json>', description: 'model catalog to import (default: demo/catalog.json of this repository)' },
      'key-limit': { type: 'string', value: '<usd>', description: `the new key's monthly limit (default ${KEY_MONTHLY_LIMIT})` },
      'video-url': {
        type: 'string',
        value: '<url>',
        description: `where the demo video's provider serves it (default: ${SAMPLE_VIDEO_URL}, the server's own sample)`,
      },
    },
    async run(ctx) {
      const { credit_balance, generations, ...summary } = await runDemo(ctx);
      const human = [
        `Demo data is ready in workspace "${summary.workspace_slug}" (${summary.workspace_id}).`,
        `New regular key (shown once, monthly limit ${optionalNumber(ctx, 'key-limit') ?? KEY_MONTHLY_LIMIT} USD, ${generations} generations over the last ${GENERATION_DAYS} days):`,
        `  ${summary.key}`,
        `Credit balance: ${credit_balance.toFixed(2)} USD`,
        '',
        `model ${summary.model}, variant ${summary.model_variant}, alias ${summary.model_alias}`,
        `generation ${summary.generation_id}`,
        `BYOK credential ${summary.byok_id}, guardrail ${summary.guardrail_id}, preset ${summary.preset_slug}`,
        `SCIM mapping ${summary.scim_mapping_id}, container ${summary.container_id} (file ${summary.container_file_id}), video job ${summary.video_job_id}`,
        `members not yet in the workspace: ${summary.user_ids_not_in_workspace.join(', ')}`,
        '',
        'Try: curl -H "Authorization: Bearer <key>" <url>/api/v1/key   (run with --json for everything above as JSON)',
      ].join('\n');
      return { json: summary, human };
    },
  },
];
