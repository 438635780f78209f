// POST /files and a crash: the server process is killed (SIGKILL) in the middle of an upload. After
// a restart nothing half-written is listed, and the storage sweep removes what the crash left (the
// temp upload and the write's claim) once it is old enough, leaving no orphan in the store.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@switchyard/db';
import { createTestDatabase, scaled } from '@switchyard/db/testing';
import { describe, expect, inject, it } from 'vitest';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { sweepStorage } from '../../src/storage/sweep.js';
import { until } from '../fixtures.js';
import { start } from '../fixtures-process.js';
import { BOUNDARY, multipart } from '../fixtures-upload.js';

const HOUR = 60 * 60 * 1000;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe('POST /files when the server is killed mid-upload', () => {
  it(
    'lists nothing half-written after a restart, and the sweep leaves no orphan in the store',
    async () => {
      const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-upload-crash-'));
      const blobs = path.join(dataDir, 'blobs');
      const key = `sk-sy-v1-${'ef'.repeat(32)}`;
      const env = {
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SWITCHYARD_BOOTSTRAP_KEY: key,
        SWITCHYARD_PLATFORM_KEY: `sk-sy-platform-v1-${'cd'.repeat(32)}`,
        STORAGE_SWEEP_INTERVAL_MS: '0',
      };
      const db = createDb(database.url);
      try {
        let proc = await start(env);
        // Half of a 4 MiB upload is sent; the rest never comes.
        const whole = multipart([{ name: 'file', filename: 'big.txt', bytes: Buffer.alloc(4 * 1024 * 1024, 'a') }]);
        const req = http.request(new URL('/api/v1/files', proc.url), {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
            'content-length': String(whole.length),
          },
        });
        req.on('error', () => undefined);
        req.write(whole.subarray(0, whole.length / 2));
        // The write is under way: claimed, and its temp file holds bytes.
        await until(async () => (await db.pendingObject.count()) === 1, { what: 'the upload to claim its key' });
        await until(
          async () => {
            const temps = await filesUnder(path.join(blobs, '.tmp'));
            return temps.length === 1 && (await fs.stat(temps[0]!)).size > 0;
          },
          { what: 'bytes in the temp file' },
        );

        proc.child.kill('SIGKILL');
        await proc.exited;
        req.destroy();

        // What the crash left: a claim, a temp file; no row, nothing under a key.
        expect(await db.document.count()).toBe(0);
        expect(await db.pendingObject.count()).toBe(1);
        expect(await filesUnder(path.join(blobs, '.tmp'))).toHaveLength(1);
        expect(await filesUnder(path.join(blobs, 'documents'))).toEqual([]);

        // After a restart, nothing half-written is listed, and the quota counts nothing.
        proc = await start(env);
        const listed = await fetch(`${proc.url}/api/v1/files`, { headers: { authorization: `Bearer ${key}` } });
        expect(listed.status).toBe(200);
        expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);
        const workspace = await db.workspace.findFirstOrThrow({ where: { slug: 'default' } });
        expect(Number(workspace.storage_used_bytes)).toBe(0);
        // A new upload works beside the debris.
        const fresh = await fetch(`${proc.url}/api/v1/files`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
          body: multipart([{ name: 'file', filename: 'ok.md', bytes: Buffer.from('# fine\n') }]),
        });
        expect(fresh.status).toBe(200);
        const keptKey = (await db.document.findFirstOrThrow()).storage_key;
        proc.child.kill('SIGTERM');
        await proc.exited;

        // An hour on (the claim aged by the database's clock, the files by the sweep's): the sweep
        // removes the temp upload and the abandoned claim, and keeps what a row points at.
        await db.$executeRaw`UPDATE pending_objects SET created_at = now() - interval '2 hours'`;
        const storage = new LocalStorage(blobs);
        const report = await sweepStorage({ db, storage, now: () => new Date(Date.now() + 2 * HOUR) });
        expect(report).toEqual({ temporary: 1, claims: 1, objects: 0 });
        expect(await db.pendingObject.count()).toBe(0);
        expect(await filesUnder(path.join(blobs, '.tmp'))).toEqual([]);
        expect(await filesUnder(path.join(blobs, 'documents'))).toEqual([path.join(blobs, ...keptKey.split('/'))]);
      } finally {
        await db.$disconnect();
        await database.drop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    scaled(300_000),
  );
});
