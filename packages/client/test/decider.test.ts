// The decider (@switchyard/client/decider, from the package's built output, as a routing service
// runs it) against real servers and PostgreSQL: it answers what routing.authorize answers for
// decisions that hold nothing, rule by rule, on the same fixtures; a change made through one
// replica reaches a decider attached to another; only platform keys may read the snapshot and the
// stream; and past its maximum staleness without the stream it refuses.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { scaled } from '@switchyard/db/testing';
import { startReplica } from '@switchyard/api/testing';
import { Prisma } from '@switchyard/db';
import { createTRPCClient, httpSubscriptionLink, type TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as DeciderModule from '../src/decider.js';
import type { AuthorizeInput, Decider } from '../src/decider.js';
import type { AppRouter } from '../src/router.js';
import { failure, useServer } from './support.js';

// The built package's entry, as a routing service imports it (a variable: the compiler checks the types against the source instead).
const BUILT = new URL('../dist/decider.js', import.meta.url).href;
const { createDecider } = (await import(BUILT)) as typeof DeciderModule;

const catalog = JSON.parse(readFileSync(new URL('../../../demo/catalog.json', import.meta.url), 'utf8'));
const env = useServer();
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  const platform = env.client(env.server.platformKey);
  await platform.models.import.mutate(catalog);
  await platform.generations.addCredits.mutate({ organization_id: env.server.organizationId, amount: 1000 });
});

const closing: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

async function decider(url: string, options: Partial<Parameters<typeof createDecider>[0]> = {}): Promise<Decider> {
  const made = await createDecider({ url, platformKey: env.server.platformKey, ...options });
  closing.push(() => made.close());
  return made;
}

/** Spend recorded against a key today (the running totals the limits read), as the server's own tests add it. */
async function addUsage(keyHash: string, usage: number) {
  const { db } = env.server;
  const key = await db.apiKey.findUniqueOrThrow({ where: { hash: keyHash } });
  const day = new Date(`${today()}T00:00:00Z`);
  await db.keyUsageDaily.upsert({
    where: { api_key_id_day: { api_key_id: key.id, day } },
    create: {
      api_key_id: key.id,
      day,
      organization_id: key.organization_id,
      usage: new Prisma.Decimal(usage),
      byok_usage: new Prisma.Decimal(0),
      request_count: 1,
    },
    update: { usage: { increment: usage } },
  });
  await db.apiKey.update({ where: { id: key.id }, data: { usage: { increment: usage } } });
}

const local = (d: Decider) =>
  d
    .metrics()
    .decisions.filter((x) => x.source === 'local')
    .reduce((n, x) => n + x.count, 0);
const fromServer = (d: Decider) =>
  d
    .metrics()
    .decisions.filter((x) => x.source === 'server')
    .reduce((n, x) => n + x.count, 0);

describe('the decider answers as routing.authorize does, for decisions that hold nothing', () => {
  let main: Decider;
  const platform = () => env.client(env.server.platformKey);
  const admin = () => env.client(env.server.managementKey);
  const newKey = async (input: Record<string, unknown> = {}) => {
    const made = await admin().keys.create.mutate({ name: `decider ${randomUUID().slice(0, 6)}`, ...input });
    return made.data.hash;
  };

  beforeAll(async () => {
    main = await decider(env.server.url);
  });

  /**
   * Each rule of docs/routing.md that applies to a decision that holds nothing, with its fixture;
   * `where` says who decides (the decider itself, or the server it asks).
   */
  const CASES: {
    rule: string;
    where: 'local' | 'server';
    input: () => Promise<AuthorizeInput>;
    expect?: Record<string, unknown>;
    /** What of the answers is compared, when asking again changes them (a free model's quotas count each ask). */
    comparable?: (decision: unknown) => unknown;
  }[] = [
    {
      rule: 'allowed: the canonical model (through an alias), its endpoints and the limits that applied',
      where: 'local',
      input: async () => ({ api_key_hash: await newKey({ limit: 5, limit_reset: 'monthly' }), model: 'OpenAI/ChatGPT-4o' }),
      expect: { allowed: true, model: 'openai/gpt-4o' },
    },
    {
      rule: 'allowed, with provider.order, a region and explain',
      where: 'local',
      input: async () => ({ api_key_hash: await newKey(), model: 'openai/gpt-4o', region: 'europe', provider: { order: ['azure'] }, explain: true }),
      expect: { allowed: true },
    },
    {
      rule: 'allowed: a key of a workspace made after the snapshot (neither is announced)',
      where: 'local',
      input: async () => {
        const ws = await admin().workspaces.create.mutate({ slug: `later-${randomUUID().slice(0, 8)}`, name: 'Later' });
        return { api_key_hash: await newKey({ workspace_id: ws.data.id }), model: 'openai/gpt-4o' };
      },
      expect: { allowed: true },
    },
    {
      rule: '1 key_unknown',
      where: 'local',
      input: async () => ({ api_key_hash: sha256(`sk-sy-v1-${randomUUID()}`), model: 'openai/gpt-4o' }),
      expect: { code: 'key_unknown' },
    },
    {
      rule: '1 key_unknown: a platform key is not a tenant key',
      where: 'local',
      input: async () => ({ api_key_hash: sha256(env.server.platformKey), model: 'openai/gpt-4o' }),
      expect: { code: 'key_unknown' },
    },
    {
      rule: '2 key_deleted',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        await admin().keys.delete.mutate({ hash });
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'key_deleted', status: 401 },
    },
    {
      rule: '3 key_disabled',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        await admin().keys.update.mutate({ hash, disabled: true });
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'key_disabled' },
    },
    {
      rule: '4 key_expired',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        await env.server.db.apiKey.update({ where: { hash }, data: { expires_at: new Date(Date.now() - 1000) } });
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'key_expired' },
    },
    {
      rule: '5 organization_disabled',
      where: 'local',
      input: async () => {
        const org = await platform().organizations.create.mutate({ name: `Disabled ${randomUUID().slice(0, 6)}` });
        await platform().organizations.disable.mutate({ organization_id: org.organization_id });
        return { api_key_hash: org.management_key_hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'organization_disabled' },
    },
    {
      rule: '6 model_not_found',
      where: 'local',
      input: async () => ({ api_key_hash: await newKey(), model: 'acme/none' }),
      expect: { code: 'model_not_found', status: 404 },
    },
    {
      rule: '7 model_not_allowed (a guardrail assigned to the key)',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        const g = await admin().guardrails.create.mutate({ name: 'only mini', allowed_models: ['openai/gpt-4o-mini'] });
        await admin().guardrails.assignKeys.mutate({ id: g.data.id, key_hashes: [hash] });
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'model_not_allowed' },
    },
    {
      rule: "7 model_not_allowed (the workspace's default guardrail)",
      where: 'local',
      input: async () => {
        const ws = await admin().workspaces.create.mutate({ slug: `dflt-${randomUUID().slice(0, 8)}`, name: 'Default guarded' });
        const hash = await newKey({ workspace_id: ws.data.id });
        // Its first write creates the workspace's default guardrail, which governs every key with no assignment.
        await admin().guardrails.update.mutate({ id: ws.data.default_guardrail_id, ignored_models: ['openai/gpt-4o'] });
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'model_not_allowed' },
    },
    {
      rule: '8 region_not_allowed',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        const g = await admin().guardrails.create.mutate({ name: 'europe only', allowed_data_regions: ['europe'] });
        await admin().guardrails.assignKeys.mutate({ id: g.data.id, key_hashes: [hash] });
        return { api_key_hash: hash, model: 'openai/gpt-4o', region: 'us' };
      },
      expect: { code: 'region_not_allowed' },
    },
    {
      rule: '9 no_endpoint (the provider filters)',
      where: 'local',
      input: async () => ({ api_key_hash: await newKey(), model: 'openai/gpt-4o', provider: { only: ['nowhere'] } }),
      expect: { code: 'no_endpoint' },
    },
    {
      rule: '9 no_endpoint (zero data retention)',
      where: 'local',
      input: async () => ({ api_key_hash: await newKey(), model: 'openai/gpt-4o', provider: { zdr: true } }),
      expect: { code: 'no_endpoint' },
    },
    {
      rule: '10-11 a free model: its quotas are counted by the server, which decides',
      where: 'server',
      input: async () => ({ api_key_hash: await newKey(), model: 'openai/gpt-oss-20b:free' }),
      expect: { allowed: true },
      comparable: (d) => ({ ...(d as object), remaining: null }),
    },
    {
      rule: '12 key_limit',
      where: 'local',
      input: async () => {
        const hash = await newKey({ limit: 1, limit_reset: 'daily' });
        await addUsage(hash, 1);
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'key_limit', status: 403 },
    },
    {
      rule: '13 guardrail_limit',
      where: 'local',
      input: async () => {
        const hash = await newKey();
        const g = await admin().guardrails.create.mutate({ name: 'capped', limit_usd: 1, reset_interval: 'weekly' });
        await admin().guardrails.assignKeys.mutate({ id: g.data.id, key_hashes: [hash] });
        await addUsage(hash, 1);
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'guardrail_limit' },
    },
    {
      rule: '14 budget_exhausted',
      where: 'local',
      input: async () => {
        const ws = await admin().workspaces.create.mutate({ slug: `budget-${randomUUID().slice(0, 8)}`, name: 'Budget' });
        await admin().budgets.set.mutate({ workspace_ref: ws.data.id, interval: 'lifetime', limit_usd: 1 });
        const hash = await newKey({ workspace_id: ws.data.id });
        await addUsage(hash, 1);
        return { api_key_hash: hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'budget_exhausted', status: 402 },
    },
    {
      rule: '15 credits_exhausted',
      where: 'local',
      input: async () => {
        const org = await platform().organizations.create.mutate({ name: `Poor ${randomUUID().slice(0, 6)}` });
        return { api_key_hash: org.management_key_hash, model: 'openai/gpt-4o' };
      },
      expect: { code: 'credits_exhausted' },
    },
    {
      rule: 'a BYOK route: its secret is opened by the server, which decides',
      where: 'server',
      input: async () => {
        const ws = await admin().workspaces.create.mutate({ slug: `byok-${randomUUID().slice(0, 8)}`, name: 'BYOK' });
        await admin().byok.create.mutate({ provider: 'openai', key: `sk-test-${randomUUID()}`, workspace_id: ws.data.id });
        return { api_key_hash: await newKey({ workspace_id: ws.data.id }), model: 'openai/gpt-4o' };
      },
      expect: { allowed: true },
    },
  ];

  for (const c of CASES) {
    it(c.rule, async () => {
      const input = await c.input();
      const before = c.where === 'local' ? local(main) : fromServer(main);
      const server = () =>
        platform()
          .routing.authorize.mutate(input)
          .then((answer) => answer.data);
      if (c.expect) expect(await server()).toMatchObject(c.expect);
      // The change that the fixture made reaches the decider through the stream (or a lookup of a hash
      // it does not hold); both are asked again until then (a second's turn changes retry_after_s).
      await expect
        .poll(async () => {
          const [theirs, ours] = await Promise.all([server(), main.authorize(input)]);
          const same = c.comparable ?? ((d: unknown) => d);
          return isDeepStrictEqual(same(ours), same(theirs)) ? 'the same' : JSON.stringify({ server: theirs, decider: ours });
        })
        .toBe('the same');
      expect(c.where === 'local' ? local(main) : fromServer(main)).toBeGreaterThan(before);
    });
  }

  it('loads the keys in pages, and holds every live secret', async () => {
    const paged = await decider(env.server.url, { pageSize: 3 });
    const live = await env.server.db.apiKeySecret.count({ where: { api_key: { deleted_at: null } } });
    expect(live).toBeGreaterThan(6);
    expect(paged.metrics()).toMatchObject({ keys: live, loads: 1 });
    const input = { api_key_hash: await newKey(), model: 'openai/gpt-4o' };
    expect(await paged.authorize(input)).toEqual((await platform().routing.authorize.mutate(input)).data);
  });

  it('an estimated cost is held by the server: the decider asks it', async () => {
    const input = { api_key_hash: await newKey(), model: 'openai/gpt-4o', estimated_cost: 0.01 };
    const before = fromServer(main);
    const decision = await main.authorize(input);
    expect(decision).toMatchObject({ allowed: true });
    expect(decision.allowed && decision.reservation_id).toBeTruthy();
    expect(fromServer(main)).toBe(before + 1);
  });
});

describe('who may read the snapshot and the stream', () => {
  /** The first answer of the change stream to `key` (null: no key): its error's status, or 200 for data. */
  function streamStatus(key: string | null): Promise<number> {
    const client = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${env.server.url}/trpc`,
          EventSource,
          eventSourceOptions: {
            fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) } }),
          },
        }),
      ],
    });
    return new Promise((resolve) => {
      const sub = client.decider.changes.subscribe(
        { version: 1 },
        {
          onData: () => {
            sub.unsubscribe();
            resolve(200);
          },
          onError: (error: TRPCClientError<AppRouter>) => {
            sub.unsubscribe();
            resolve((error.data as { httpStatus?: number } | undefined)?.httpStatus ?? 0);
          },
        },
      );
    });
  }

  it('a tenant key gets 403 on the snapshot and the stream, no key 401; a platform key is served', async () => {
    const tenant = (await env.client(env.server.managementKey).keys.create.mutate({ name: 'tenant' })).key;
    for (const key of [tenant, env.server.managementKey]) {
      expect((await failure(env.client(key).decider.snapshot.query({ part: 'catalog', version: 1 }))).status).toBe(403);
      expect((await failure(env.client(key).decider.spend.query({ version: 1, organization_id: env.server.organizationId, checks: [] }))).status).toBe(403);
      expect(await streamStatus(key)).toBe(403);
      const refused = await createDecider({ url: env.server.url, platformKey: key }).then(
        () => null,
        (e: { status?: number }) => e.status,
      );
      expect(refused).toBe(403);
    }
    const anonymous = await fetch(`${env.server.url}/trpc/decider.snapshot?input=${encodeURIComponent(JSON.stringify({ part: 'catalog', version: 1 }))}`);
    expect(anonymous.status).toBe(401);
    expect(await streamStatus(null)).toBe(401);
    expect(await streamStatus(env.server.platformKey)).toBe(200);
  });

  it('a decider of a protocol version the server does not serve is refused with 400', async () => {
    const answer = await failure(env.client(env.server.platformKey).decider.snapshot.query({ part: 'catalog', version: 99 }));
    expect(answer.status).toBe(400);
    expect(answer.metadata?.reason).toMatch(/version 99 is not served/);
  });
});

describe('across replicas, and when the stream is cut', () => {
  it('a key disabled through one replica is refused by a decider attached to another', async () => {
    const replica = await startReplica(env.server);
    closing.push(() => replica.close());
    const attached = await decider(replica.url);
    const admin = env.client(env.server.managementKey);
    const hash = (await admin.keys.create.mutate({ name: 'revoked soon' })).data.hash;
    const input = { api_key_hash: hash, model: 'openai/gpt-4o' };
    expect(await attached.authorize(input)).toMatchObject({ allowed: true });
    await admin.keys.update.mutate({ hash, disabled: true });
    await expect.poll(async () => (await attached.authorize(input)).allowed, { timeout: scaled(5_000), interval: 10 }).toBe(false);
    expect(await attached.authorize(input)).toMatchObject({ status: 401, code: 'key_disabled' });
    expect(attached.metrics()).toMatchObject({ streamConnected: true, loads: 1 });
  });

  it('past its maximum staleness without the stream, the decider refuses with 503 and when to try again', async () => {
    const replica = await startReplica(env.server, { env: { DECIDER_HEARTBEAT_MS: '200' } });
    let open = true;
    closing.push(() => open && replica.close());
    const cut = await decider(replica.url, { maxStalenessMs: 1_000, retryAfterS: 7 });
    const hash = (await env.client(env.server.managementKey).keys.create.mutate({ name: 'stale' })).data.hash;
    const input = { api_key_hash: hash, model: 'openai/gpt-4o' };
    expect(await cut.authorize(input)).toMatchObject({ allowed: true });
    // The server's close ends its streams (they do not hold its drain), and nothing answers at the URL afterwards.
    await replica.close();
    open = false;
    await expect
      .poll(() => cut.authorize(input), { timeout: scaled(10_000) })
      .toMatchObject({
        allowed: false,
        status: 503,
        code: 'limits_unavailable',
        retry_after_s: 7,
      });
    expect(cut.metrics().streamConnected).toBe(false);
    expect(cut.metrics().decisions.some((d) => d.source === 'failed_closed' && d.code === 'limits_unavailable')).toBe(true);
  });
});
