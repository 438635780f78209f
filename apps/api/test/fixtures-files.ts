// Helpers for the files and videos tests: servers with media settings, containers and files made
// through the sandbox runner's internal ways in, random byte streams with their checksums, and an
// RSS watcher that samples memory as bytes flow (no timers).
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inject } from 'vitest';
import { startTestServer, type TestServer, type TestStore } from '../src/testing/test-server.js';
import { trpc } from './fixtures-trpc.js';

export const testServerWith = (env: Record<string, string>, store: TestStore = 'local') =>
  startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), env, store });

/** The keys of the objects a server has stored under `prefix`, sorted (either store). */
export async function storedKeys(server: TestServer, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of server.storage.list(prefix)) keys.push(entry.key);
  return keys.sort();
}

/** The bytes a server stored under `key`. */
export async function readStored(server: TestServer, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await server.storage.get(key)).stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function fileIdOf(path: string): string {
  return `cfile_${Buffer.from(path, 'utf8').toString('base64url')}`;
}

/** Opens (or reopens) a session's container, as the platform, in the server's default workspace unless named; returns its canonical id. */
export async function openContainer(server: TestServer, sessionKey: string, options: { restart?: boolean; key?: string; workspaceId?: string } = {}) {
  const { status, data, error } = await trpc(
    server,
    'files.openContainer',
    { session_key: sessionKey, workspace_id: options.workspaceId ?? server.workspaceId, ...(options.restart ? { restart: true } : {}) },
    { key: options.key ?? server.platformKey },
  );
  if (status !== 200) throw new Error(`openContainer: ${status} ${JSON.stringify(error)}`);
  return data.data.container_id;
}

/**
 * Writes a file into a container through PUT /internal/containers/{id}/files/{file_id}, as the
 * platform, in the server's organization unless named (`organizationId` null: none named).
 */
export function putFile(
  server: TestServer,
  containerId: string,
  fileId: string,
  body: Uint8Array | AsyncIterable<Uint8Array>,
  options: { key?: string | null; contentType?: string; organizationId?: string | null } = {},
): Promise<Response> {
  const organizationId = options.organizationId === undefined ? server.organizationId : options.organizationId;
  const query = organizationId === null ? '' : `?organization_id=${encodeURIComponent(organizationId)}`;
  const pathname = `/internal/containers/${encodeURIComponent(containerId)}/files/${fileId}${query}`;
  const key = options.key === undefined ? server.platformKey : options.key;
  const headers: Record<string, string> = options.contentType ? { 'content-type': options.contentType } : {};
  if (body instanceof Uint8Array) return server.request(pathname, { key, method: 'PUT', headers, body });
  // Streamed bodies go through node:http, which reads the source only as fast as the socket drains.
  const url = new URL(pathname, server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'PUT',
      headers: { ...headers, ...(key ? { authorization: `Bearer ${key}` } : {}) },
    });
    req.on('response', async (res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: res.headers as Record<string, string> }));
    });
    req.on('error', reject);
    pipeline(Readable.from(body), req).catch(reject);
  });
}

export async function writeFile(server: TestServer, containerId: string, path: string, bytes: Uint8Array, contentType?: string) {
  const res = await putFile(server, containerId, fileIdOf(path), bytes, { contentType });
  if (res.status !== 201) throw new Error(`writeFile: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { file_id: string; size_bytes: number; sha256: string } }).data;
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * `total` pseudo-random bytes in 64 KiB chunks: one random block, each chunk stamped with its
 * number, so no two chunks are alike without spending time on 200 MiB of real randomness.
 */
export function bigStream(total: number): { chunks: AsyncIterable<Uint8Array>; sha256: () => string } {
  const block = randomBytes(64 * 1024);
  const hash = createHash('sha256');
  async function* chunks() {
    for (let offset = 0, n = 0; offset < total; offset += block.length, n++) {
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, total - offset)));
      chunk.writeUInt32BE(n, 0);
      hash.update(chunk);
      yield chunk;
    }
  }
  return { chunks: chunks(), sha256: () => hash.digest('hex') };
}

/** Peak RSS growth over a baseline, sampled on every chunk the consumer sees. */
export class RssWatcher {
  readonly baseline = process.memoryUsage().rss;
  peak = this.baseline;
  sample(): void {
    const rss = process.memoryUsage().rss;
    if (rss > this.peak) this.peak = rss;
  }
  get growthMiB(): number {
    return (this.peak - this.baseline) / 1024 / 1024;
  }
}

/** Reads a response body chunk by chunk (never whole): size, checksum, and RSS samples. */
export async function drain(res: Response, watcher?: RssWatcher): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    hash.update(value);
    watcher?.sample();
  }
  return { size, sha256: hash.digest('hex') };
}
