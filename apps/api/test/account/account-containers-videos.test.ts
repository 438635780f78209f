// GET /credits, GET /videos/{jobId}, GET /containers/{container_id}/files(/{file_id}) over real HTTP:
// success shapes, the statuses they document, 401 without a key, and who may see what.
import {
  SAMPLE_VIDEO_URL,
  ContainerFileListSchema,
  GetCreditsOutputSchema,
  ContainerFileRecordSchema,
  ErrorEnvelopeSchema,
  VideoJobStatusRecordSchema,
} from '@switchyard/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, record } from '../fixtures-catalog.js';
import { createOrganization, useServer } from '../fixtures.js';
import { fileIdOf, openContainer, writeFile } from '../fixtures-files.js';
import { trpc, type InputOf } from '../fixtures-trpc.js';

const env = useServer();

let regular: { key: string; hash: string };

beforeAll(async () => {
  regular = await createKey(env.server);
});

/** The platform steps of these tests (credits, video jobs), in one place. */
const platform = {
  addCredits: async (organizationId: string, amount: number) => {
    const { status, error } = await trpc(env.server, 'generations.addCredits', { organization_id: organizationId, amount }, { key: env.server.platformKey });
    expect(status, JSON.stringify(error)).toBe(200);
  },
  createJob: async (workspaceId: string, status: InputOf<'videos.createJob'>['status'], outputs = 1) => {
    const res = await trpc(
      env.server,
      'videos.createJob',
      {
        workspace_id: workspaceId,
        provider: 'p',
        model: 'p/v',
        upstream_job_id: `u-${Math.random()}`,
        status,
        outputs: Array.from({ length: outputs }, () => ({ upstream_url: SAMPLE_VIDEO_URL })),
      },
      { key: env.server.platformKey },
    );
    expect(res.status, JSON.stringify(res.error)).toBe(200);
    return res.data.data.id;
  },
};

async function get(path: string, key: string | null = env.server.managementKey, headers: Record<string, string> = {}) {
  const res = await env.server.request(`/api/v1${path}`, { key, headers });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: res.status, body: (await res.json()) as unknown };
}

function expectError(answer: { status: number; body: unknown }, status: number) {
  expect(answer.status).toBe(status);
  expect(ErrorEnvelopeSchema.parse(answer.body).error.code).toBe(status);
}

describe('GET /credits', () => {
  it('answers the lifetime credit added and spend recorded; balance = credits - usage', async () => {
    const org = await createOrganization(env.server.db, 'Credits');
    expect(await get('/credits', org.managementKey)).toEqual({ status: 200, body: { data: { total_credits: 0, total_usage: 0 } } });
    await platform.addCredits(org.organizationId, 10);
    await platform.addCredits(org.organizationId, 2.5);
    const { hash } = await createKey(env.server, {}, org.managementKey);
    await record(env.server, { api_key_hash: hash, usage: 0.75 });
    await record(env.server, { api_key_hash: hash, usage: 0.25 });
    const answer = await get('/credits', org.managementKey);
    expect(answer).toEqual({ status: 200, body: { data: { total_credits: 12.5, total_usage: 1 } } });
    const balance = (await env.server.db.organization.findUniqueOrThrow({ where: { id: org.organizationId } })).credit_balance.toNumber();
    expect(balance).toBe(11.5);
  });

  it('is per organization: another organization sees its own figures', async () => {
    await platform.addCredits(env.server.organizationId, 3);
    const mine = await get('/credits');
    const theirs = await get('/credits', env.other.managementKey);
    expect(GetCreditsOutputSchema.parse(mine.body).data.total_credits).toBeGreaterThanOrEqual(3);
    expect(theirs.body).toEqual({ data: { total_credits: 0, total_usage: 0 } });
  });

  it('401 without a key, 403 for a regular key or a platform key', async () => {
    expectError(await get('/credits', null), 401);
    expectError(await get('/credits', regular.key), 403);
    expectError(await get('/credits', env.server.platformKey), 403);
  });
});

describe('GET /videos/{jobId}', () => {
  it('a completed job: bare, with its polling URL and one content URL per output, each of which downloads', async () => {
    const id = await platform.createJob(env.server.workspaceId, 'completed', 2);
    const { status, body } = await get(`/videos/${id}`);
    expect(status).toBe(200);
    const job = VideoJobStatusRecordSchema.strict().parse(body);
    expect(job).toEqual({
      id,
      polling_url: `${env.server.url}/api/v1/videos/${id}`,
      status: 'completed',
      unsigned_urls: [0, 1].map((i) => `${env.server.url}/api/v1/videos/${id}/content?index=${i}`),
    });
    const second = new URL(job.unsigned_urls![1]!);
    const content = await env.server.request(second.pathname + second.search, { key: env.server.managementKey });
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(0);
    // The polling URL answers the same record.
    expect((await get(new URL(job.polling_url).pathname.replace('/api/v1', ''))).body).toEqual(body);
  });

  it('a queued job is pending, without content URLs; in_progress and failed as they are', async () => {
    for (const [stored, polled] of [
      ['queued', 'pending'],
      ['in_progress', 'in_progress'],
      ['failed', 'failed'],
    ] as const) {
      const id = await platform.createJob(env.server.workspaceId, stored);
      const { status, body } = await get(`/videos/${id}`);
      expect(status).toBe(200);
      expect(body).toEqual({ id, polling_url: `${env.server.url}/api/v1/videos/${id}`, status: polled });
    }
  });

  it("404 for an unknown job and for another organization's; 401 without a key", async () => {
    const id = await platform.createJob(env.server.workspaceId, 'completed');
    expectError(await get('/videos/video_unknown'), 404);
    expectError(await get(`/videos/${id}`, env.other.managementKey), 404);
    expectError(await get(`/videos/${id}`, null), 401);
  });

  it('a regular key sees the jobs of its own workspace only; the platform key gets 403', async () => {
    const { status, data } = await trpc(env.server, 'workspaces.create', { slug: `vw-${Date.now()}`, name: 'Videos' });
    expect(status).toBe(200);
    const elsewhere = await platform.createJob(data.data.id, 'completed');
    const here = await platform.createJob(env.server.workspaceId, 'completed');
    expect((await get(`/videos/${here}`, regular.key)).status).toBe(200);
    expectError(await get(`/videos/${elsewhere}`, regular.key), 404);
    expect((await get(`/videos/${elsewhere}`)).status).toBe(200);
    expectError(await get(`/videos/${here}`, env.server.platformKey), 403);
  });
});

describe('GET /containers/{container_id}/files and /files/{file_id}', () => {
  let containerId: string;
  const paths = ['b.txt', 'a/z.txt', 'a/b.txt', 'Z.txt', 'a.txt', 'é.txt'];
  beforeAll(async () => {
    containerId = await openContainer(env.server, `list-${Date.now()}`);
    for (const path of paths) await writeFile(env.server, containerId, path, Buffer.from(`content of ${path}`));
  });

  it('lists every file in byte order of path, bare', async () => {
    const { status, body } = await get(`/containers/${containerId}/files?limit=100`);
    expect(status).toBe(200);
    const list = ContainerFileListSchema.parse(body);
    const sorted = [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(list.data.map((f) => f.path)).toEqual(sorted);
    expect(list).toMatchObject({ object: 'list', has_more: false, first_id: fileIdOf(sorted[0]!), last_id: fileIdOf(sorted.at(-1)!) });
    const one = list.data.find((f) => f.path === 'a/b.txt')!;
    expect(ContainerFileRecordSchema.strict().parse(one)).toEqual({
      id: fileIdOf('a/b.txt'),
      object: 'container.file',
      container_id: containerId,
      path: 'a/b.txt',
      bytes: Buffer.byteLength('content of a/b.txt'),
      created_at: expect.any(Number),
      source: 'assistant',
    });
    expect(Math.abs(one.created_at - Date.now() / 1000)).toBeLessThan(600);
  });

  it('pages with after=<last_id> until has_more is false, each file once', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { status, body } = await get(`/containers/${containerId}/files?limit=4${after ? `&after=${after}` : ''}`);
      expect(status).toBe(200);
      const list = ContainerFileListSchema.parse(body);
      seen.push(...list.data.map((f) => f.path));
      if (!list.has_more) break;
      expect(list.data).toHaveLength(4);
      after = list.last_id;
    }
    expect(seen).toHaveLength(paths.length);
    expect(new Set(seen).size).toBe(paths.length);
    // After the last file: an empty page, both ids null.
    const last = fileIdOf([...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).at(-1)!);
    expect((await get(`/containers/${containerId}/files?after=${last}`)).body).toEqual({
      object: 'list',
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });

  it('gets one file, bare', async () => {
    const { status, body } = await get(`/containers/${containerId}/files/${fileIdOf('a/z.txt')}`);
    expect(status).toBe(200);
    expect(ContainerFileRecordSchema.strict().parse(body)).toMatchObject({ id: fileIdOf('a/z.txt'), path: 'a/z.txt', container_id: containerId });
  });

  it('400 for a bad limit or a malformed id; 404 for an unknown file; a listing of an unknown container: 400 (404 is not listed)', async () => {
    expectError(await get(`/containers/${containerId}/files?limit=0`), 400);
    expectError(await get(`/containers/${containerId}/files?limit=1001`), 400);
    expectError(await get(`/containers/${containerId}/files?after=nope`), 400);
    expectError(await get(`/containers/${containerId}/files/${fileIdOf('../x')}`), 400);
    expectError(await get(`/containers/${containerId}/files/cfile_%2B%2B`), 400);
    expectError(await get(`/containers/${containerId}/files/${fileIdOf('missing.txt')}`), 404);
    expectError(await get(`/containers/sess_unknown/files`), 400);
    expectError(await get(`/containers/sess_unknown/files/${fileIdOf('a.txt')}`), 404);
  });

  it("401 without a key; another organization's management key gets 404 (400 for the listing: 404 is not listed); a regular key sees its own workspace's", async () => {
    expectError(await get(`/containers/${containerId}/files`, null), 401);
    expectError(await get(`/containers/${containerId}/files/${fileIdOf('a.txt')}`, null), 401);
    expectError(await get(`/containers/${containerId}/files`, env.other.managementKey), 400);
    expectError(await get(`/containers/${containerId}/files/${fileIdOf('a.txt')}`, env.other.managementKey), 404);
    expect((await get(`/containers/${containerId}/files`, regular.key)).status).toBe(200);
    const { data } = await trpc(env.server, 'workspaces.create', { slug: `cw-${Date.now()}`, name: 'Elsewhere' });
    const elsewhere = await openContainer(env.server, `elsewhere-${Date.now()}`, { workspaceId: data.data.id });
    await writeFile(env.server, elsewhere, 'x.txt', Buffer.from('x'));
    expectError(await get(`/containers/${elsewhere}/files`, regular.key), 400);
    expectError(await get(`/containers/${elsewhere}/files/${fileIdOf('x.txt')}`, regular.key), 404);
    expect(ContainerFileListSchema.parse((await get(`/containers/${elsewhere}/files`)).body).data).toHaveLength(1);
    expectError(await get(`/containers/${containerId}/files`, env.server.platformKey), 403);
  });
});
