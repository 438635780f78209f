// Containers, promote and video jobs through the typed client, against a real server.
import { describe, expect, it } from 'vitest';
import { type RouterOutputs } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();
const { client } = env;
const fileIdOf = (path: string) => `cfile_${Buffer.from(path).toString('base64url')}`;

describe('files and videos through @switchyard/client', () => {
  it('opens a container, and promotes a file the sandbox runner wrote into it', async () => {
    const sy = client(env.server.managementKey);
    const { data: container } = await sy.files.openContainer.mutate({ session_key: 'client-session' });
    expect(container.container_id).toBe('sess_client-session');

    const put = await env.server.request(`/internal/containers/${container.container_id}/files/${fileIdOf('out/answer.txt')}`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: '42\n',
    });
    expect(put.status).toBe(201);

    const promoted: RouterOutputs['files']['promote'] = await sy.files.promote.mutate({
      container_id: container.container_id,
      file_id: fileIdOf('out/answer.txt'),
    });
    expect(promoted).toMatchObject({ _shape: 'native', type: 'file', filename: 'answer.txt', mime_type: 'text/plain', size_bytes: 3, downloadable: true });

    const missing = await failure(sy.files.promote.mutate({ container_id: container.container_id, file_id: fileIdOf('nope.txt') }));
    expect(missing).toMatchObject({ status: 404, message: 'Resource not found' });
    const invalid = await failure(sy.files.promote.mutate({ container_id: container.container_id, file_id: fileIdOf('../x') }));
    expect(invalid).toMatchObject({ status: 400, message: 'Invalid request parameters' });
  });

  it('records a video job whose output then downloads over REST', async () => {
    const sy = client(env.server.managementKey);
    const { data: job } = await sy.videos.createJob.mutate({
      provider: 'fake',
      model: 'fake/video',
      upstream_job_id: 'job-1',
      outputs: [{ upstream_url: `${env.server.url}/healthz`, media_type: 'video/mp4' }],
    });
    expect(job).toMatchObject({ status: 'completed', outputs: [{ index: 0, media_type: 'video/mp4' }] });
    // The "provider" here is the server's own health check: its bytes come through unchanged.
    const res = await env.server.request(`/api/v1/videos/${job.id}/content`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });

    const { key } = await sy.keys.create.mutate({ name: 'regular' });
    const forbidden = await failure(client(key).videos.createJob.mutate({ provider: 'p', model: 'm', upstream_job_id: 'u', outputs: [{ upstream_url: 'http://127.0.0.1/x' }] }));
    expect(forbidden.status).toBe(403);
  });
});
