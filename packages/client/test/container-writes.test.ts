// writeContainerFile: the sandbox runner's PUT route through the client package, against a real
// server storing bytes in each store.
import { TEST_STORES, type TestStore } from '@switchyard/api/testing';
import { describe, expect, it } from 'vitest';
import { containerFileId, createSwitchyardClient, writeContainerFile } from '../src/index.js';
import { failure, useServer } from './support.js';

describe.each(TEST_STORES)('writeContainerFile (%s store)', (store: TestStore) => {
  const env = useServer(store);

  it('writes and replaces a file, which then downloads; errors are SwitchyardErrors with the status', async () => {
    // The sandbox runner holds a platform key and names the organization and workspace it acts in.
    const options = { url: env.server.url, apiKey: env.server.platformKey };
    const sy = createSwitchyardClient(options);
    const { data: container } = await sy.files.openContainer.mutate({ session_key: 'writer', workspace_id: env.server.workspaceId });
    const target = { organization_id: env.server.organizationId, container_id: container.container_id };

    expect(containerFileId('out/a.txt')).toBe(`cfile_${Buffer.from('out/a.txt').toString('base64url')}`);
    const first = await writeContainerFile(options, { ...target, path: 'out/a.txt', body: 'one', content_type: 'text/plain' });
    expect(first).toMatchObject({ file_id: containerFileId('out/a.txt'), path: 'out/a.txt', mime_type: 'text/plain', size_bytes: 3 });
    const second = await writeContainerFile(options, { ...target, path: 'out/a.txt', body: new Uint8Array([1, 2]) });
    expect(second).toMatchObject({ mime_type: 'application/octet-stream', size_bytes: 2 });
    const res = await env.server.request(`/api/v1/containers/${container.container_id}/files/${second.file_id}/content`);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([1, 2]));

    expect(await failure(writeContainerFile({ ...options, apiKey: env.server.managementKey }, { ...target, path: 'x', body: 'x' }))).toMatchObject({
      status: 403,
      message: 'Only platform keys can perform this operation',
    });
    expect(await failure(writeContainerFile(options, { ...target, container_id: 'sess_missing', path: 'x', body: 'x' }))).toMatchObject({ status: 404 });
    expect(await failure(writeContainerFile(options, { ...target, path: '../x', body: 'x' }))).toMatchObject({ status: 400 });
    expect(await failure(writeContainerFile({ ...options, url: 'http://127.0.0.1:1' }, { ...target, path: 'x', body: 'x' }))).toMatchObject({ status: 0 });
  });
});
