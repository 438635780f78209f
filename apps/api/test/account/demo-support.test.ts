// What `switchyard demo` needs from the server beyond the 21 operations: the lookups that make it
// safe to run twice (videos.listJobs; internal, management key; GET /byok is in byok.test.ts, GET
// /scim/group-mappings in scim.test.ts)
// and the sample video (an output named sample:video.mp4, served from the server's own files; also
// public at /samples/video.mp4) that stands in for a provider on a machine with no internet.
import fs from 'node:fs/promises';
import { ListVideoJobsOutputSchema, SAMPLE_VIDEO_URL } from '@switchyard/schema';
import { describe, expect, it } from 'vitest';
import { useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace } from '../fixtures-admin.js';
import { ok, trpc, type InputOf, type ProcedurePath } from '../fixtures-trpc.js';

const env = useServer();

const query = <P extends ProcedurePath>(path: P, input: InputOf<P>, key?: string) => trpc(env.server, path, input, { query: true, key });

describe('videos.listJobs (internal)', () => {
  it("lists a workspace's jobs newest first, optionally of one upstream job id", async () => {
    const ws = await createWorkspace(env.server, 'video-list');
    const job = (upstream: string) => ({
      workspace_id: ws.id,
      provider: 'p',
      model: 'p/v',
      upstream_job_id: upstream,
      outputs: [{ upstream_url: `${env.server.url}/samples/video.mp4` }],
    });
    const first = (await ok(env.server, 'videos.createJob', job('up-1'))).data;
    const second = (await ok(env.server, 'videos.createJob', job('up-2'))).data;
    const third = (await ok(env.server, 'videos.createJob', job('up-1'))).data;
    await ok(env.server, 'videos.createJob', { ...job('up-1'), workspace_id: env.server.workspaceId });

    const listed = ListVideoJobsOutputSchema.parse((await query('videos.listJobs', { workspace_id: ws.id })).data);
    expect(listed.total_count).toBe(3);
    expect(new Set(listed.data.map((j) => j.id))).toEqual(new Set([first.id, second.id, third.id]));
    expect(listed.data.map((j) => j.created_at)).toEqual([...listed.data.map((j) => j.created_at)].sort().reverse());
    // The workspace by its slug too.
    const bySlug = ListVideoJobsOutputSchema.parse((await query('videos.listJobs', { workspace_id: 'video-list' })).data);
    expect(bySlug.data.map((j) => j.id)).toEqual(listed.data.map((j) => j.id));
    const ofOne = ListVideoJobsOutputSchema.parse((await query('videos.listJobs', { workspace_id: ws.id, upstream_job_id: 'up-1' })).data);
    expect(ofOne.total_count).toBe(2);
    expect(new Set(ofOne.data.map((j) => j.id))).toEqual(new Set([first.id, third.id]));
    expect(ofOne.data[0]!.outputs).toEqual([{ index: 0, upstream_url: `${env.server.url}/samples/video.mp4`, media_type: 'video/mp4', size_bytes: null }]);
  });

  it("404 for another organization's workspace; 403 for a regular key", async () => {
    expect((await query('videos.listJobs', { workspace_id: env.other.workspaceId })).status).toBe(404);
    expect((await query('videos.listJobs', {}, (await createRegularKey(env.server)).key)).status).toBe(403);
  });
});

/** Records a video job of the demo's kind (the platform's step: one place to change its key). */
const createSampleJob = (upstreamUrl: string) =>
  trpc(env.server, 'videos.createJob', {
    workspace_id: env.server.workspaceId,
    provider: 'demo',
    model: 'demo/sample-video',
    upstream_job_id: 'sample',
    outputs: [{ upstream_url: upstreamUrl }],
  });

describe('the sample video', () => {
  it('serves the sample MP4 without a key, with ranges, outside /api/v1', async () => {
    const file = await fs.readFile(new URL('../../assets/sample-video.mp4', import.meta.url));
    const res = await env.server.request('/samples/video.mp4', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(file)).toBe(true);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');

    const part = await env.server.request('/samples/video.mp4', { key: null, headers: { range: 'bytes=0-7' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(file.subarray(0, 8))).toBe(true);
    expect((await env.server.request('/api/v1/samples/video.mp4')).status).toBe(404);
  });

  it("is served to a job that names it as sample:video.mp4, from the server's own files, with no configuration", async () => {
    const file = await fs.readFile(new URL('../../assets/sample-video.mp4', import.meta.url));
    const created = await createSampleJob(SAMPLE_VIDEO_URL);
    expect(created.status).toBe(200);
    const job = created.data.data;
    expect(job.outputs[0]!.upstream_url).toBe('sample:video.mp4');
    const res = await env.server.request(`/api/v1/videos/${job.id}/content`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('content-length')).toBe(String(file.length));
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await res.arrayBuffer()).equals(file)).toBe(true);

    const part = await env.server.request(`/api/v1/videos/${job.id}/content`, { headers: { range: 'bytes=4-7' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 4-7/${file.length}`);
    expect(Buffer.from(await part.arrayBuffer()).toString('latin1')).toBe('ftyp');
    const past = await env.server.request(`/api/v1/videos/${job.id}/content`, { headers: { range: `bytes=${file.length}-` } });
    expect(past.status).toBe(400);
    expect(past.headers.get('content-range')).toBeNull();
    expect(await past.json()).toMatchObject({ error: { code: 400, message: 'Invalid request parameters' } });
    // Same access rules as any video: 401 without a key, 404 for another organization.
    expect((await env.server.request(`/api/v1/videos/${job.id}/content`, { key: null })).status).toBe(401);
    expect((await env.server.request(`/api/v1/videos/${job.id}/content`, { key: env.other.managementKey })).status).toBe(404);
  });

  it('is the only internal name: other sample: names and schemes are refused when the job is created', async () => {
    for (const url of ['sample:other.mp4', 'sample:../../package.json', 'sample:', 'file:///etc/passwd', 'data:video/mp4;base64,AAAA']) {
      expect((await createSampleJob(url)).status, url).toBe(400);
    }
  });
});
