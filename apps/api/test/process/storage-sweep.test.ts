// Nothing left behind: the storage sweep, in both stores. It removes what a crash leaves (objects
// no row points at, claims of abandoned writes, unfinished uploads) once it is an hour old, never
// bytes a row points at or a running write has claimed, and runs on one replica at a time.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putClaimed, settleClaim } from '../../src/storage/claims.js';
import { SWEEP_LOCK } from '../../src/storage/sweep.js';
import { TEST_STORES, type TestServer, type TestStore } from '../../src/testing/test-server.js';
import { until } from '../fixtures.js';
import { fileIdOf, openContainer, putFile, readStored, sha256, storedKeys, testServerWith, writeFile } from '../fixtures-files.js';

const HOUR = 60 * 60 * 1000;
const MiB = 1024 * 1024;

/** Every storage key a row points at. */
async function referencedKeys(server: TestServer): Promise<string[]> {
  const [files, documents] = await Promise.all([
    server.db.containerFile.findMany({ select: { storage_key: true } }),
    server.db.document.findMany({ select: { storage_key: true } }),
  ]);
  return [...files, ...documents].map((row) => row.storage_key).sort();
}

const allStored = async (server: TestServer) => [...(await storedKeys(server, 'containers/')), ...(await storedKeys(server, 'documents/'))].sort();

async function temporaries(server: TestServer) {
  const all = [];
  for await (const upload of server.storage.listTemporary()) all.push(upload);
  return all;
}

describe.each(TEST_STORES)('%s store', (store: TestStore) => {
  let server: TestServer;
  let containerId: string;
  let containerRowId: string;
  beforeAll(async () => {
    server = await testServerWith({ MAX_FILE_BYTES: String(10 * MiB) }, store);
    containerId = await openContainer(server, 'sweep');
    containerRowId = (await server.db.container.findFirstOrThrow({ where: { container_id: containerId } })).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('removes what a crash leaves once it is an hour old, and nothing a row points at or a write has claimed', async () => {
    const kept = await writeFile(server, containerId, 'kept.txt', Buffer.from('kept'));
    expect((await server.request(`/api/v1/containers/${containerId}/files/${kept.file_id}/promote`, { method: 'POST' })).status).toBe(200);
    const put = (key: string) => server.storage.put(key, Readable.from([randomBytes(1000)]));
    // What crashes leave: bytes stored but no row committed, and no claim left (an orphan);
    const orphan = `containers/${containerRowId}/crashed-after-storing`;
    await put(orphan);
    // a claim (and its bytes) of a write that died two hours ago;
    const abandoned = `containers/${containerRowId}/crashed-while-claimed`;
    await put(abandoned);
    await server.db.$executeRaw`INSERT INTO pending_objects (key, created_at) VALUES (${abandoned}, now() - interval '2 hours')`;
    // an upload that stopped half-way (a temp file, a multipart upload);
    let release!: () => void;
    const stopped = new Promise<void>((resolve) => (release = resolve));
    const unfinished = server.storage.put(
      `containers/${containerRowId}/crashed-mid-upload`,
      Readable.from(
        (async function* () {
          yield randomBytes(6 * MiB);
          await stopped;
          yield randomBytes(1000);
        })(),
      ),
    );
    unfinished.catch(() => undefined);
    await until(async () => (await temporaries(server)).length === 1);
    // and a write still running: claimed, bytes stored, row not yet committed.
    const running = `containers/${containerRowId}/still-running`;
    await putClaimed(server.db, server.storage, running, Readable.from([Buffer.from('running')]), {});

    // Everything is younger than an hour: only the abandoned claim goes (by the database's clock).
    expect(await server.sweepStorage()).toEqual({ temporary: 0, claims: 1, objects: 0 });
    expect(await allStored(server)).toEqual([...(await referencedKeys(server)), orphan, abandoned, running].sort());

    // Two hours later (the server's clock; the claim of the running write is as young as ever).
    server.setNow(new Date(Date.now() + 2 * HOUR));
    try {
      expect(await server.sweepStorage()).toEqual({ temporary: 1, claims: 0, objects: 2 });
    } finally {
      server.setNow(null);
    }
    expect(await allStored(server)).toEqual([...(await referencedKeys(server)), running].sort());
    expect(await temporaries(server)).toEqual([]);
    release();
    await expect(unfinished).rejects.toThrow();
    // What rows point at is intact.
    const download = await server.request(`/api/v1/containers/${containerId}/files/${kept.file_id}/content`);
    expect(await download.text()).toBe('kept');
    for (const key of await referencedKeys(server)) expect((await readStored(server, key)).length).toBeGreaterThan(0);
    await server.db.pendingObject.deleteMany({ where: { key: running } });
    await server.storage.delete(running);
  });

  it('keeps bytes from their claim to their row, then by the row, even with no age limit', async () => {
    const key = `containers/${containerRowId}/claimed`;
    await putClaimed(server.db, server.storage, key, Readable.from([Buffer.from('claimed')]), {});
    await server.sweepStorage({ objectMinAgeMs: 0 });
    expect(await server.storage.stat(key)).toEqual({ size: 7 });
    // The transaction that points a row at the key releases the claim.
    await server.db.$transaction(async (tx) => {
      await tx.containerFile.create({
        data: {
          organization_id: (await tx.container.findUniqueOrThrow({ where: { id: containerRowId } })).organization_id,
          container_id: containerRowId,
          path: 'claimed.txt',
          size_bytes: 7,
          sha256: sha256(Buffer.from('claimed')),
          storage_key: key,
        },
      });
      await settleClaim(tx, key);
    });
    expect(await server.db.pendingObject.count({ where: { key } })).toBe(0);
    await server.sweepStorage({ objectMinAgeMs: 0 });
    expect((await readStored(server, key)).toString()).toBe('claimed');
  });

  it('never removes bytes a row points at while sweeps run during writes, and leaves nothing behind', async () => {
    const write = async (writer: number, round: number) => {
      // Each writer rewrites its two files (a rewrite drops the old bytes) and promotes one of them.
      const path = `w${writer}/f${round % 2}.bin`;
      const bytes = randomBytes(2_000 + round);
      const res = await putFile(server, containerId, fileIdOf(path), bytes);
      expect(res.status).toBe(201);
      const promoted = await server.request(`/api/v1/containers/${containerId}/files/${fileIdOf(path)}/promote`, { method: 'POST' });
      expect(promoted.status).toBe(200);
    };
    let writing = true;
    let sweeps = 0;
    let removed = 0;
    const sweeping = (async () => {
      while (writing) {
        const report = await server.sweepStorage({ objectMinAgeMs: 0 });
        sweeps++;
        removed += report?.objects ?? 0;
      }
    })();
    try {
      await Promise.all(
        [0, 1, 2, 3].map(async (writer) => {
          for (let round = 0; round < 8; round++) await write(writer, round);
        }),
      );
    } finally {
      writing = false;
      await sweeping;
    }
    console.info(`${store}: ${sweeps} sweeps ran during 32 writes and 32 promotions; they removed ${removed} replaced objects`);
    expect(sweeps).toBeGreaterThan(1);
    // Every row's bytes are there, whole.
    const files = await server.db.containerFile.findMany({ where: { container_id: containerRowId } });
    for (const file of files) {
      const res = await server.request(`/api/v1/containers/${containerId}/files/${fileIdOf(file.path)}/content`);
      expect(res.status, file.path).toBe(200);
      expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(file.sha256);
    }
    for (const document of await server.db.document.findMany()) {
      expect(sha256(await readStored(server, document.storage_key))).toBe(document.sha256);
    }
    // One more sweep: exactly what rows point at is left, no claim, no unfinished upload.
    await server.sweepStorage({ objectMinAgeMs: 0 });
    expect(await allStored(server)).toEqual(await referencedKeys(server));
    expect(await server.db.pendingObject.count()).toBe(0);
    expect(await temporaries(server)).toEqual([]);
  });

  it('sweeps on one replica at a time: another holding the lock makes it skip the round', async () => {
    const orphan = `documents/nobody/orphan`;
    await server.storage.put(orphan, Readable.from([Buffer.from('x')]));
    await server.db.$transaction(async (tx) => {
      // As another replica's sweep would: the lock, held for this transaction.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SWEEP_LOCK})`;
      expect(await server.sweepStorage({ objectMinAgeMs: 0 })).toBeNull();
    });
    expect(await server.storage.stat(orphan)).not.toBeNull();
    expect(await server.sweepStorage({ objectMinAgeMs: 0 })).toMatchObject({ objects: 1 });
    expect(await server.storage.stat(orphan)).toBeNull();
  });
});

describe('the periodic sweep', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await testServerWith({ STORAGE_SWEEP_INTERVAL_MS: '100' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('runs every STORAGE_SWEEP_INTERVAL_MS and logs what it removed', async () => {
    const orphan = 'documents/nobody/left-by-a-crash';
    await server.storage.put(orphan, Readable.from([Buffer.from('x')]));
    server.setNow(new Date(Date.now() + 2 * HOUR));
    try {
      // Removed by one of the next sweeps, now that it is an hour old.
      await until(async () => (await server.storage.stat(orphan)) === null);
    } finally {
      server.setNow(null);
    }
    await until(async () => server.logs.some((entry) => entry.msg === 'storage sweep removed what no row points at'));
    expect(server.logs.find((entry) => entry.component === 'storage-sweep')).toMatchObject({ objects: 1, temporary: 0, claims: 0 });
  });
});
