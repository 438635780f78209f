// Containers, promote and video jobs through the typed client, against a real server storing bytes
// in each store.
import { TEST_STORES, type TestStore } from '@switchyard/api/testing';
import { describe, expect, it } from 'vitest';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema';
import type { RouterOutputs } from '../src/index.js';
import { failure, useServer } from './support.js';

const fileIdOf = (path: string) => `cfile_${Buffer.from(path).toString('base64url')}`;

describe.each(TEST_STORES)('files and videos through @switchyard/client (%s store)', (store: TestStore) => {
  const env = useServer(store);
  const { client } = env;

  it('opens a container, and promotes a file the sandbox runner wrote into it', async () => {
    const sy = client(env.server.managementKey);
    const platform = client(env.server.platformKey);
    const { data: container } = await platform.files.openContainer.mutate({ session_key: 'client-session', workspace_id: env.server.workspaceId });
    expect(container.container_id).toBe('sess_client-session');

    const path = `/internal/containers/${container.container_id}/files/${fileIdOf('out/answer.txt')}?organization_id=${env.server.organizationId}`;
    const put = await env.server.request(path, {
      key: env.server.platformKey,
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
    const { data: job } = await client(env.server.platformKey).videos.createJob.mutate({
      workspace_id: env.server.workspaceId,
      provider: 'fake',
      model: 'fake/video',
      upstream_job_id: 'job-1',
      outputs: [{ upstream_url: SAMPLE_VIDEO_URL, media_type: 'video/mp4' }],
    });
    expect(job).toMatchObject({ status: 'completed', outputs: [{ index: 0, upstream_url: 'sample:video.mp4', media_type: 'video/mp4' }] });
    // The output is the server's own sample video (no provider to run here): a real MP4.
    const res = await env.server.request(`/api/v1/videos/${job.id}/content`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(4, 8)
        .toString('latin1'),
    ).toBe('ftyp');

    // Credentials in a provider URL are refused when the job is created.
    const withCredentials = await failure(
      client(env.server.platformKey).videos.createJob.mutate({
        workspace_id: env.server.workspaceId,
        provider: 'p',
        model: 'm',
        upstream_job_id: 'u',
        outputs: [{ upstream_url: 'https://user:pass@videos.example.com/v.mp4' }],
      }),
    );
    expect(withCredentials).toMatchObject({ status: 400, message: 'Invalid request parameters' });

    const { key } = await sy.keys.create.mutate({ name: 'regular' });
    for (const tenant of [key, env.server.managementKey]) {
      const forbidden = await failure(
        client(tenant).videos.createJob.mutate({
          workspace_id: env.server.workspaceId,
          provider: 'p',
          model: 'm',
          upstream_job_id: 'u',
          outputs: [{ upstream_url: 'http://127.0.0.1/x' }],
        }),
      );
      expect(forbidden).toMatchObject({ status: 403, message: 'Only platform keys can perform this operation' });
    }
  });
});
