// Hostile input, one test per observation: input a client should be refused for is refused with the
// spec's envelope and a status the operation documents, never with a 500, a dropped connection or a
// body that is not JSON.
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_MESSAGES, ErrorEnvelopeSchema } from '@switchyard/schema';
import { queryRows, statement } from '@switchyard/db';
import { loadConfig } from '../../src/config.js';
import { httpErrorOf } from '../../src/lib/errors.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { defaultKeyFor, testServer } from '../fixtures.js';
import { rest } from '../fixtures-admin.js';
import { demoCatalog } from '../fixtures-catalog.js';
import { testServerWith } from '../fixtures-files.js';
import { buildWorld, platformCall, type World } from '../fixtures-world.js';
import { trpc } from '../fixtures-trpc.js';

let server: TestServer;
let world: World;
beforeAll(async () => {
  server = await testServer();
  world = await buildWorld(server);
});
afterAll(async () => {
  await server?.close();
});

/** A raw request/answer over a socket, for what fetch cannot send (malformed request lines). */
function rawExchange(request: string | Buffer, port = Number(new URL(server.url).port)): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    // Written, not ended: the server answers (Connection: close, or a parser error) and closes.
    socket.write(request);
  });
}

/** The answer is the envelope for `status` with the spec's text, as JSON. */
async function expectJsonEnvelope(res: Response, status: number) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(ErrorEnvelopeSchema.parse(JSON.parse(text)).error).toMatchObject({ code: status, message: ERROR_MESSAGES[status as 400] });
}

const feedbackBody = () => JSON.stringify({ generation_id: world.generationId, category: 'other', comment: 'ok' });

describe('body parser errors are the envelope (no 500)', () => {
  const encodings: Array<[string, Record<string, string>, Uint8Array | string]> = [
    ['Content-Encoding gzip on a plain body', { 'content-encoding': 'gzip', 'content-type': 'application/json' }, '{"a":1}'],
    ['an unknown Content-Encoding', { 'content-encoding': 'x-squash', 'content-type': 'application/json' }, '{"a":1}'],
    ['charset=latin1', { 'content-type': 'application/json; charset=latin1' }, '{"a":1}'],
    ['an unknown charset', { 'content-type': 'application/json; charset=no-such-charset' }, '{"a":1}'],
  ];
  it.each(encodings)('%s: 400 with a key, 401 without, on a body operation', async (_what, headers, body) => {
    for (const path of ['/api/v1/generation/feedback', `/api/v1/workspaces/second/members/add`]) {
      await expectJsonEnvelope(await server.request(path, { method: 'POST', headers, body }), 400);
      await expectJsonEnvelope(await server.request(path, { method: 'POST', headers, body, key: null }), 401);
    }
  });

  it.each(encodings)('%s: ignored on an operation that reads no body (GET /key with a body)', async (_what, headers, body) => {
    const lines = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const answer = await rawExchange(
      `GET /api/v1/key HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.managementKey}\r\n${lines}` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(200);
    expect(server.logs.filter((e) => e.msg === 'internal error')).toEqual([]);
  });

  it('a gzipped JSON body is read', async () => {
    const res = await server.request('/api/v1/generation/feedback', {
      method: 'POST',
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: gzipSync(feedbackBody()),
    });
    expect(res.status).toBe(200);
  });
});

describe('Content-Type is compared case-insensitively', () => {
  it.each(['APPLICATION/JSON', 'Application/Json; Charset=UTF-8'])('%s is JSON', async (type) => {
    const res = await server.request('/api/v1/generation/feedback', { method: 'POST', headers: { 'content-type': type }, body: feedbackBody() });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ data: { success: true } });
  });

  it('a media type that only starts like JSON is not JSON', async () => {
    const res = await server.request('/api/v1/generation/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/jsonfoo' },
      body: feedbackBody(),
    });
    await expectJsonEnvelope(res, 400);
  });
});

describe('NUL and other characters PostgreSQL cannot store are refused with 400 before any query', () => {
  // Refused by the storable check (its issue in error.metadata shows no query ran): 400 where the
  // operation lists 400, else 404, the listed status it declares for names nothing can have.
  it.each([
    ['/generation?id=%00', 404],
    ['/generation/content?id=a%00b', 404],
    ['/workspaces/%00/members', 400],
    ['/workspaces/%00/budgets', 404],
    ['/workspaces/default%00/budgets/daily', 400],
    ['/presets/%00/versions', 400],
    ['/guardrails/%00/assignments/keys', 400],
    ['/byok/%00', 404],
    ['/model/openai/gpt%00', 404],
  ] as const)('GET %s: %i', async (path, status) => {
    const res = await server.request(`/api/v1${path}`);
    const body = (await res.clone().json()) as { error: { metadata: { issues: Array<{ message: string }> } } };
    await expectJsonEnvelope(res, status);
    expect(body.error.metadata.issues[0]?.message).toBe('contains a NUL character');
  });

  it.each([
    ['NUL', 'gen\u0000'],
    ['a lone high surrogate', 'gen\ud800'],
    ['a lone low surrogate', 'x\udc00y'],
  ])('%s in a JSON body (REST)', async (_what, value) => {
    for (const body of [
      { generation_id: value, category: 'other' },
      { generation_id: world.generationId, category: 'other', comment: value },
    ]) {
      const res = await server.request('/api/v1/generation/feedback', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await expectJsonEnvelope(res, 400);
    }
  });

  it('in a PATCH body and in a key of an object', async () => {
    const res = await server.request(`/api/v1/scim/group-mappings/${world.scimMappingId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"role":"admin","\\u0000":1}',
    });
    await expectJsonEnvelope(res, 400);
  });

  it('in the path of PUT /internal/containers/...', async () => {
    const res = await server.request(`/internal/containers/sess_%00/files/cfile_eA?organization_id=${server.organizationId}`, {
      method: 'PUT',
      body: 'x',
      key: server.platformKey,
    });
    await expectJsonEnvelope(res, 400);
  });

  it('in the path of the downloads', async () => {
    await expectJsonEnvelope(await server.request(`/api/v1/containers/%00/files/${world.fileId}/content`), 400);
    await expectJsonEnvelope(await server.request(`/api/v1/videos/video_%00/content`), 400);
  });

  it('in tRPC procedures (mutations and queries)', async () => {
    for (const [procedure, input] of [
      ['workspaces.create', { slug: 'nul', name: 'a\u0000b' }],
      ['presets.create', { slug: 'nul', name: 'n', config: { 'k\u0000': 1 } }],
      ['presets.create', { slug: 'nul', name: 'n', config: { model: '\ud800' } }],
      ['keys.create', { name: 'k\u0000' }],
      ['organization.createMember', { email: 'nul@example.com', first_name: '\u0000' }],
    ] as const) {
      const res = await trpc(server, procedure, input);
      expect(res.status, `${procedure} ${JSON.stringify(res.error)}`).toBe(400);
      expect(res.error?.message).toBe(ERROR_MESSAGES[400]);
    }
    const query = await trpc(server, 'byok.list', { workspace_id: 'x\u0000' }, { query: true });
    expect(query.status).toBe(400);
    const recorded = await trpc(server, 'generations.record', {
      id: 'nul-gen',
      api_key_hash: '0'.repeat(64),
      model: 'openai/gpt-4o',
      user_agent: 'curl\u0000',
    });
    expect(recorded.status).toBe(400);
  });
});

describe('sizes no schema allows are refused before any query', () => {
  const long = 'g'.repeat(10_000);

  it('an identifier longer than any the service makes: 400 where listed, else 404 (no query runs)', async () => {
    const feedback = await server.request('/api/v1/generation/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ generation_id: long, category: 'other' }),
    });
    await expectJsonEnvelope(feedback, 400);
    for (const [path, status] of [
      [`/generation?id=${long}`, 404],
      [`/byok/${long}`, 404],
      [`/workspaces/${long}/members`, 400],
      [`/presets/${long}/versions`, 400],
      [`/guardrails/${long}/assignments/members`, 400],
      [`/model/${long}/x`, 404],
    ] as const) {
      const res = await server.request(`/api/v1${path}`);
      const body = (await res.clone().json()) as { error: { metadata?: { issues?: Array<{ path: string }> } } };
      await expectJsonEnvelope(res, status);
      expect(body.error.metadata?.issues?.length, path).toBe(1);
    }
  });

  it('the same bound in tRPC procedures that write identifiers', async () => {
    const res = await trpc(server, 'models.upsertAlias', { alias: `a/${'b'.repeat(5_000)}`, model_id: 'openai/gpt-4o' });
    expect(res.status).toBe(400);
    expect(res.error?.data.metadata).toMatchObject({ issues: [{ path: 'alias' }] });
  });
});

describe('deeply nested JSON is refused with 400', () => {
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

  it('in presets.create and generations.record (tRPC)', async () => {
    for (const [procedure, body] of [
      ['presets.create', `{"slug":"deep","name":"deep","config":${deepObject(10_000)}}`],
      [
        'generations.record',
        `{"id":"deep","api_key_hash":"${'0'.repeat(64)}","model":"a/b","content":{"input":{"messages":[]},"error":${deepObject(10_000)}}}`,
      ],
      ['generations.record', `{"id":"deep","api_key_hash":"${'0'.repeat(64)}","model":"a/b","provider_responses":${deep(10_000)}}`],
    ]) {
      const res = await server.request(`/trpc/${procedure}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        key: defaultKeyFor(server, procedure!),
      });
      const answer = (await res.json()) as { error: { message: string } };
      expect(res.status, `${procedure}: ${JSON.stringify(answer).slice(0, 300)}`).toBe(400);
      expect(answer.error.message).toBe(ERROR_MESSAGES[400]);
    }
  });

  it('in a REST body', async () => {
    const res = await server.request('/api/v1/generation/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"generation_id":"x","category":"other","extra":${deep(10_000)}}`,
    });
    await expectJsonEnvelope(res, 400);
  });

  it('in a REST body, where a number belongs (the coercion of strings leaves it to the schema)', async () => {
    const res = await server.request(`/api/v1/workspaces/${server.workspaceId}/budgets/monthly`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: `{"limit_usd":${deep(10_000)}}`,
    });
    await expectJsonEnvelope(res, 400);
  });

  it('moderately nested configs are still accepted', async () => {
    const created = await trpc(server, 'presets.create', { slug: 'nested', name: 'n', config: JSON.parse(deepObject(20)) });
    expect(created.status, JSON.stringify(created.error)).toBe(200);
  });
});

describe("Node's HTTP parser errors are the envelope", () => {
  it('a URL over 16 KB: 431 as JSON', async () => {
    const res = await server.request(`/api/v1/generation?id=${'a'.repeat(20_000)}`);
    await expectJsonEnvelope431(res);
  });

  it('headers over 16 KB: 431 as JSON', async () => {
    const res = await server.request('/api/v1/key', { headers: { 'x-padding': 'p'.repeat(20_000) } });
    await expectJsonEnvelope431(res);
  });

  it('a malformed request line: 400 as JSON', async () => {
    const answer = await rawExchange('GARBAGE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 400, message: ERROR_MESSAGES[400] } });
  });

  it('a header with a forbidden character: 400 as JSON', async () => {
    const answer = await rawExchange('GET /api/v1/key HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 400, message: ERROR_MESSAGES[400] } });
  });

  it('a malformed chunk in a chunked body, once the operation has started: 400 as JSON, then the connection closes', async () => {
    const head =
      `POST /api/v1/generation/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.managementKey}\r\n` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    // A chunk size that is not hex, and a chunk longer than its size.
    for (const body of ['zz\r\n{}\r\n0\r\n\r\n', `2\r\n${feedbackBody()}\r\n0\r\n\r\n`]) {
      const answer = await rawExchange(head + body);
      expect(answer.status, answer.headers).toBe(400);
      expect(answer.headers.toLowerCase()).toContain('content-type: application/json');
      expect(answer.headers.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 400, message: ERROR_MESSAGES[400] } });
    }
    // The server goes on answering.
    expect((await server.request('/api/v1/key')).status).toBe(200);
  });

  it('an HTTP/1.1 request without Host: 400 as JSON; HTTP/1.0 may leave it out', async () => {
    const auth = `Authorization: Bearer ${server.managementKey}\r\n`;
    const answer = await rawExchange(`GET /api/v1/key HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.headers.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 400, message: ERROR_MESSAGES[400], metadata: { reason: 'no Host header' } } });
    expect((await rawExchange(`GET /api/v1/key HTTP/1.0\r\n${auth}\r\n`)).status).toBe(200);
  });

  it('an oversized request right after a download on the same keep-alive connection: 431 as JSON, every time', async () => {
    // The client may send the next request as soon as it has the download's last byte, before the
    // download's answer has finished on the server's side: the 431 must come after it, not a reset.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<number | string>((resolve) => {
        const req = http.request(
          { host: '127.0.0.1', port: Number(new URL(server.url).port), path, agent, headers: { authorization: `Bearer ${server.managementKey}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end();
      });
    const answers: Array<number | string> = [];
    try {
      for (let i = 0; i < 150; i++) {
        answers.push(await get(`/api/v1/containers/${world.containerId}/files/${world.fileId}/content`));
        answers.push(await get(`/api/v1/key?x=${'y'.repeat(20_000)}`));
      }
    } finally {
      agent.destroy();
    }
    expect(answers.filter((a, i) => a !== (i % 2 ? 431 : 200))).toEqual([]);
  });

  async function expectJsonEnvelope431(res: Response) {
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: { code: 431, message: 'Request header fields too large' } });
  }
});

describe('GET /guardrails answers only the statuses it lists (401, 500)', () => {
  it("a regular key's GET /guardrails for another workspace is an empty page, not 403", async () => {
    const res = await rest(server, `/guardrails?workspace_id=${world.secondWorkspaceId}`, { key: world.regularKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], total_count: 0 });
  });

  it("GET /guardrails for another organization's or an unknown workspace is an empty page, not 404", async () => {
    for (const id of [world.other.workspaceId, '00000000-0000-4000-8000-000000000000']) {
      const res = await rest(server, `/guardrails?workspace_id=${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], total_count: 0 });
    }
  });
});

describe('oversized bodies get a status the operation lists', () => {
  it('an oversized body on members/add, feedback and the SCIM PATCH is 400 (413 is not listed there)', async () => {
    const big = JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) });
    for (const [method, path] of [
      ['POST', '/workspaces/second/members/add'],
      ['POST', '/generation/feedback'],
      ['PATCH', `/scim/group-mappings/${world.scimMappingId}`],
    ]) {
      const res = await server.request(`/api/v1${path}`, { method, headers: { 'content-type': 'application/json' }, body: big });
      await expectJsonEnvelope(res, 400);
    }
  });

  it('an oversized body on promote (which lists 413) stays 413', async () => {
    const big = JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) });
    const res = await server.request(`/api/v1/containers/${world.containerId}/files/${world.fileId}/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    await expectJsonEnvelope(res, 413);
  });
});

describe("database errors that are the caller's fault", () => {
  beforeAll(() => server.db.$executeRawUnsafe('CREATE TABLE big_keys (k text PRIMARY KEY)'));
  // Real errors from the real database, through Prisma and through node-postgres (queryRows).
  const cases: Array<[string, () => Promise<unknown>, number]> = [
    ['NUL in text (22021), Prisma', () => server.db.user.findFirst({ where: { email: 'a\u0000b' } }), 400],
    ['an invalid uuid (22P02), Prisma', () => server.db.$queryRawUnsafe('SELECT $1::uuid', 'not-a-uuid'), 400],
    ['numeric out of range (22003), Prisma', () => server.db.$queryRawUnsafe('SELECT $1::int', '99999999999'), 400],
    [
      'an index row too large (54000), Prisma',
      () => server.db.$executeRawUnsafe("INSERT INTO big_keys SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i"),
      400,
    ],
    ['an undefined table (42P01) is ours: 500', () => server.db.$queryRawUnsafe('SELECT * FROM no_such_table'), 500],
  ];
  it.each(cases)('%s', async (_what, run, status) => {
    const error = await run().then(
      () => {
        throw new Error('expected the database to refuse');
      },
      (e: unknown) => e,
    );
    expect(httpErrorOf(error).status).toBe(status);
  });

  it('through node-postgres (named statements) as well', async () => {
    const error = await queryRows(server.db, statement('SELECT $1::uuid AS id'), ['nope']).catch((e: unknown) => e);
    expect(httpErrorOf(error).status).toBe(400);
  });
});

describe('links.next', () => {
  const PAGE = '/api/v1/embeddings/models?offset=0&limit=1';
  const NEXT = '/api/v1/embeddings/models?offset=1&limit=1';
  const nextOf = async (target: TestServer, headers: Record<string, string>) =>
    ((await (await target.request(PAGE, { headers })).json()) as { links: { next: string } }).links.next;
  /** links.next of a request with this exact Host header (fetch would not send an insane one). */
  async function nextWithHost(target: TestServer, host: string, extra = '') {
    const { port } = new URL(target.url);
    const answer = await rawExchange(
      `GET ${PAGE} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${target.managementKey}\r\n${extra}Connection: close\r\n\r\n`,
      Number(port),
    );
    return { status: answer.status, next: answer.status === 200 ? (JSON.parse(answer.body) as { links: { next: string } }).links.next : null };
  }

  it('ignores X-Forwarded-Host and X-Forwarded-Proto without TRUST_PROXY', async () => {
    expect(await nextOf(server, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' })).toBe(`${server.url}${NEXT}`);
  });

  it('uses a sane Host header, and the address the client reached otherwise', async () => {
    expect(await nextWithHost(server, 'api.example.com:8443')).toEqual({ status: 200, next: `http://api.example.com:8443${NEXT}` });
    expect(await nextWithHost(server, '[::1]:8080')).toEqual({ status: 200, next: `http://[::1]:8080${NEXT}` });
    for (const host of ['evil.example/"><script>', 'a@b.example', 'x y', '', 'a..b', `${'a'.repeat(300)}.example`]) {
      const answer = await nextWithHost(server, host);
      // Node refuses some of these itself (400); the others must not reach the link.
      if (answer.status === 400) continue;
      expect(answer, JSON.stringify(host)).toEqual({ status: 200, next: `${server.url}${NEXT}` });
    }
  });

  it("with TRUST_PROXY (express's meaning), follows X-Forwarded-Host and -Proto from a trusted peer, if sane", async () => {
    const proxied = await testServerWith({ TRUST_PROXY: 'loopback' });
    try {
      await platformCall(proxied, 'models.import', demoCatalog);
      expect(await nextOf(proxied, { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' })).toBe(`https://api.example.com${NEXT}`);
      expect(await nextOf(proxied, { 'x-forwarded-host': 'a.example, b.example' })).toBe(`http://a.example${NEXT}`);
      expect(await nextOf(proxied, { 'x-forwarded-host': 'evil.example/<x>', 'x-forwarded-proto': 'javascript' })).toBe(`${proxied.url}${NEXT}`);
      expect(await nextOf(proxied, {})).toBe(`${proxied.url}${NEXT}`);
    } finally {
      await proxied.close();
    }
    // A peer the setting does not trust: forwarded headers are ignored.
    const elsewhere = await testServerWith({ TRUST_PROXY: '10.0.0.0/8' });
    try {
      await platformCall(elsewhere, 'models.import', demoCatalog);
      expect(await nextOf(elsewhere, { 'x-forwarded-host': 'api.example.com' })).toBe(`${elsewhere.url}${NEXT}`);
    } finally {
      await elsewhere.close();
    }
  });

  it('TRUST_PROXY takes what express takes, and nothing else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(() => loadConfig({ TRUST_PROXY: 'not an address' })).toThrow(/TRUST_PROXY/);
  });
});

describe('BYOK labels', () => {
  it.each(['12345678', 'abcdefghijkl', 'sk-0123456789abcdef', 'sk-proj-Zx81bQe9TTq3LmN0pAbCd'])('reveal at most a quarter of %s', async (secret) => {
    const created = await trpc(server, 'byok.create', { provider: 'openai', name: `len-${secret.length}`, key: secret });
    expect(created.status).toBe(200);
    const label = (created.data as { data: { label: string } }).data.label;
    const shown = label.replace('...', '');
    expect(shown.length).toBeLessThanOrEqual(Math.floor(secret.length / 4));
    expect(label).toContain('...');
    expect(secret.startsWith(label.split('...')[0]!)).toBe(true);
    expect(secret.endsWith(label.split('...')[1]!)).toBe(true);
  });
});

describe('promote', () => {
  it('answers the bare File record', async () => {
    const res = await server.request(`/api/v1/containers/${world.containerId}/files/${world.fileId}/promote`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ _shape: 'native', type: 'file', filename: 'report.txt', downloadable: true });
    expect(body.data).toBeUndefined();
  });
});
