// Memory stays flat whatever the size: a 200 MiB file is written into a container, downloaded,
// promoted, and a 200 MiB video is proxied, while the process's RSS is sampled on every chunk.
// Server and client share this process, so the figure covers both; buffering a whole body
// anywhere would add 200 MiB. The S3 store is shown with 128 MiB (its test S3 server shares this
// process too, and S3 is slower here); `pnpm bench:replicas` measures a 1 GiB file in a server process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_STORES, type TestServer, type TestStore } from '../../src/testing/test-server.js';
import { bigStream, drain, fileIdOf, openContainer, putFile, RssWatcher, testServerWith } from '../fixtures-files.js';
import { trpc } from '../fixtures-trpc.js';

const MiB = 1024 * 1024;
const SIZES: Record<TestStore, number> = { local: 200 * MiB, s3: 128 * MiB };
/**
 * A third of what buffering the body would cost. After the warm-up, streaming measures 0-20 MiB
 * here; the margin is for collector lag (V8 frees the 64 KiB chunks' memory lazily).
 */
const FLAT_MIB = 64;

describe.each(TEST_STORES)('%s store', (store: TestStore) => {
  const SIZE = SIZES[store];
  let server: TestServer;
  beforeAll(async () => {
    // The video provider below listens on a free port of loopback: the upstream rules allow that host.
    server = await testServerWith({ MAX_FILE_BYTES: String(SIZE), STORAGE_QUOTA_BYTES: String(2 * SIZE), UPSTREAM_ALLOWED_HOSTS: '127.0.0.1' }, store);
    // Warm up (connections, code paths) so that one-time allocations are not counted below.
    const warm = await openContainer(server, 'warm-up');
    const res = await putFile(server, warm, fileIdOf('warm.bin'), bigStream(16 * 1024 * 1024).chunks);
    expect(res.status).toBe(201);
    await drain(await server.request(`/api/v1/containers/${warm}/files/${fileIdOf('warm.bin')}/content`));
  });
  afterAll(async () => {
    await server?.close();
  });

  describe(`memory stays flat for ${SIZE / MiB} MiB`, () => {
    let containerId: string;
    let checksum: string;

    it('while the sandbox runner writes the file', async () => {
      containerId = await openContainer(server, 'big');
      const source = bigStream(SIZE);
      const watcher = new RssWatcher();
      async function* watched() {
        for await (const chunk of source.chunks) {
          watcher.sample();
          yield chunk;
        }
      }
      const res = await putFile(server, containerId, fileIdOf('big.bin'), watched());
      expect(res.status).toBe(201);
      checksum = source.sha256();
      expect(((await res.json()) as { data: { size_bytes: number; sha256: string } }).data).toMatchObject({ size_bytes: SIZE, sha256: checksum });
      console.info(`${store}: upload of ${SIZE / MiB} MiB: RSS grew by ${watcher.growthMiB.toFixed(1)} MiB`);
      expect(watcher.growthMiB).toBeLessThan(FLAT_MIB);
    });

    it('while the file is downloaded', async () => {
      const watcher = new RssWatcher();
      const res = await server.request(`/api/v1/containers/${containerId}/files/${fileIdOf('big.bin')}/content`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(SIZE));
      const body = await drain(res, watcher);
      expect(body).toEqual({ size: SIZE, sha256: checksum });
      console.info(`${store}: download of ${SIZE / MiB} MiB: RSS grew by ${watcher.growthMiB.toFixed(1)} MiB`);
      expect(watcher.growthMiB).toBeLessThan(FLAT_MIB);
    });

    it('while the file is promoted (copied in storage)', async () => {
      const watcher = new RssWatcher();
      // No chunks flow through this process's client side here: sample from the storage's own reads.
      const sampling = setInterval(() => watcher.sample(), 5);
      try {
        const res = await server.request(`/api/v1/containers/${containerId}/files/${fileIdOf('big.bin')}/promote`, { method: 'POST' });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { size_bytes: number }).size_bytes).toBe(SIZE);
      } finally {
        clearInterval(sampling);
      }
      console.info(`${store}: promote of ${SIZE / MiB} MiB: RSS grew by ${watcher.growthMiB.toFixed(1)} MiB`);
      expect(watcher.growthMiB).toBeLessThan(FLAT_MIB);
    });

    // The video proxy does not touch the store: it is measured once, with the local one (not skipped
    // with the S3 one: not registered there).
    (store === 'local' ? it : () => undefined)('while a video is proxied from the provider', async () => {
      let sent = '';
      const provider = http.createServer((_req, res) => {
        const source = bigStream(SIZE);
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': SIZE });
        (async () => {
          for await (const chunk of source.chunks) {
            if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
          }
          sent = source.sha256();
          res.end();
        })().catch(() => res.destroy());
      });
      await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/big.mp4`;
        const job = await trpc(server, 'videos.createJob', {
          workspace_id: server.workspaceId,
          provider: 'fake',
          model: 'fake/video',
          upstream_job_id: 'big',
          outputs: [{ upstream_url: url }],
        });
        const watcher = new RssWatcher();
        const res = await server.request(`/api/v1/videos/${job.data.data.id}/content`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-length')).toBe(String(SIZE));
        const body = await drain(res, watcher);
        expect(body).toEqual({ size: SIZE, sha256: sent });
        console.info(`video proxy of ${SIZE / MiB} MiB: RSS grew by ${watcher.growthMiB.toFixed(1)} MiB`);
        expect(watcher.growthMiB).toBeLessThan(FLAT_MIB);
      } finally {
        await new Promise((resolve) => provider.close(resolve));
      }
    });
  });
});
