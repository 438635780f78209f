// The BlobStorage backends (the local directory and S3, against the test process's S3 server) from
// the same test code, and the sandbox id codecs, without a server.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { scaled } from '@switchyard/db/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { PayloadTooLarge, Unavailable, NotFound, Invalid } from '../../src/lib/errors.js';
import { containerIdOf, decodeFileId, encodeFileId } from '../../src/modules/files/sandbox-ids.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import { createStorage } from '../../src/storage/media.js';
import type { BlobStorage } from '../../src/storage/storage.js';
import { TEST_STORES, testS3, type TestStore } from '../../src/testing/test-server.js';
import { sha256 } from '../fixtures-files.js';
import { until } from '../fixtures.js';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const MiB = 1024 * 1024;

/** A source that yields `first`, then waits for `release()` before yielding `rest` (or failing). */
function stalled(first: Buffer, rest: Buffer) {
  let release!: (outcome: 'go' | 'fail') => void;
  const released = new Promise<'go' | 'fail'>((resolve) => (release = resolve));
  async function* chunks() {
    yield first;
    if ((await released) === 'fail') throw new Error('source broke');
    yield rest;
  }
  return { source: Readable.from(chunks()), release };
}

describe.each(TEST_STORES)('%s storage', (store: TestStore) => {
  let root: string;
  let storage: BlobStorage;
  const keys = async (prefix = '') => (await collect(storage.list(prefix))).map((e) => e.key).sort();
  const temporaries = () => collect(storage.listTemporary());

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-storage-'));
    if (store === 'local') {
      storage = new LocalStorage(path.join(root, 'blobs'));
    } else {
      const s3 = await testS3();
      storage = await createStorage(loadConfig(s3.env(await s3.createBucket(), 'sy/blobs')).storage);
    }
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('stores a stream and streams it back byte for byte, with size and checksum', async () => {
    const bytes = randomBytes(300_000);
    const put = await storage.put('a/b/c', Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]));
    expect(put).toEqual({ size: bytes.length, sha256: sha256(bytes) });
    expect(await storage.stat('a/b/c')).toEqual({ size: bytes.length });
    const got = await storage.get('a/b/c');
    expect(got.size).toBe(bytes.length);
    expect((await readAll(got.stream)).equals(bytes)).toBe(true);
    const listed = await collect(storage.list(''));
    expect(listed).toEqual([{ key: 'a/b/c', size: bytes.length, modifiedAt: expect.any(Date) }]);
    expect(await temporaries()).toEqual([]);
  });

  it('stores a large stream in parts, one part at a time in flight', async () => {
    // 12 MiB: three S3 parts (5 + 5 + 2 MiB); the local store writes it as it comes.
    const bytes = randomBytes(12 * MiB);
    const put = await storage.put(
      'big/one',
      Readable.from(
        (function* () {
          for (let offset = 0; offset < bytes.length; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
        })(),
      ),
    );
    expect(put).toEqual({ size: bytes.length, sha256: sha256(bytes) });
    expect(sha256(await readAll((await storage.get('big/one')).stream))).toBe(sha256(bytes));
  });

  it('serves ranges as ranges', async () => {
    const bytes = randomBytes(10_000);
    await storage.put('ranged', Readable.from([bytes]));
    for (const range of [
      { start: 0, end: 0 },
      { start: 100, end: 199 },
      { start: 9_990, end: 9_999 },
    ]) {
      const got = await storage.get('ranged', { range });
      expect(got).toMatchObject({ size: 10_000, range });
      expect((await readAll(got.stream)).equals(bytes.subarray(range.start, range.end + 1))).toBe(true);
    }
    // An end past the last byte means up to it.
    const tail = await storage.get('ranged', { range: { start: 9_000, end: 20_000 } });
    expect(tail.range).toEqual({ start: 9_000, end: 9_999 });
    expect((await readAll(tail.stream)).length).toBe(1_000);
    await expect(storage.get('ranged', { range: { start: 10_000, end: 10_001 } })).rejects.toBeInstanceOf(Invalid);
  });

  it('replaces atomically, deletes, and reports absence', async () => {
    await storage.put('k', Readable.from([Buffer.from('one')]));
    await storage.put('k', Readable.from([Buffer.from('two!')]));
    expect((await readAll((await storage.get('k')).stream)).toString()).toBe('two!');
    await storage.delete('k');
    await storage.delete('k');
    expect(await storage.stat('k')).toBeNull();
    await expect(storage.get('k')).rejects.toBeInstanceOf(NotFound);
    expect(await keys()).toEqual([]);
  });

  it('lists by prefix', async () => {
    for (const key of ['containers/c1/x', 'containers/c1/y', 'containers/c2/z', 'documents/w/d']) {
      await storage.put(key, Readable.from([Buffer.from(key)]));
    }
    expect(await keys('containers/')).toEqual(['containers/c1/x', 'containers/c1/y', 'containers/c2/z']);
    expect(await keys('containers/c1/')).toEqual(['containers/c1/x', 'containers/c1/y']);
    expect(await keys('documents/w/d')).toEqual(['documents/w/d']);
    expect(await keys('nothing/')).toEqual([]);
    // Emptied "directories" go with their last object.
    for (const key of await keys()) await storage.delete(key);
    expect(await keys()).toEqual([]);
    if (store === 'local') expect(await fs.readdir(path.join(root, 'blobs'))).toEqual(['.tmp']);
  });

  it('leaves nothing visible, and no unfinished upload, when the source breaks mid-write', async () => {
    await storage.put('keep', Readable.from([Buffer.from('old')]));
    async function* breaking() {
      yield randomBytes(6 * MiB); // past the first S3 part: a multipart upload is under way
      throw new Error('source broke');
    }
    await expect(storage.put('keep', Readable.from(breaking()))).rejects.toThrow('source broke');
    await expect(storage.put('new', Readable.from(breaking()))).rejects.toThrow('source broke');
    expect((await readAll((await storage.get('keep')).stream)).toString()).toBe('old');
    expect(await storage.stat('new')).toBeNull();
    expect(await keys()).toEqual(['keep']);
    expect(await temporaries()).toEqual([]);
  });

  it('refuses a stream over maxBytes with PayloadTooLarge and stores nothing', async () => {
    await expect(storage.put('big', Readable.from([randomBytes(600), randomBytes(600)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(PayloadTooLarge);
    const parts = Readable.from([randomBytes(6 * MiB), randomBytes(6 * MiB)]);
    await expect(storage.put('bigger', parts, { maxBytes: 8 * MiB })).rejects.toBeInstanceOf(PayloadTooLarge);
    expect(parts.destroyed).toBe(true);
    expect(await keys()).toEqual([]);
    expect(await temporaries()).toEqual([]);
    expect((await storage.put('exact', Readable.from([randomBytes(1000)]), { maxBytes: 1000 })).size).toBe(1000);
  });

  it('lists an upload under way as unfinished; removing it fails that upload and stores nothing', async () => {
    const { source, release } = stalled(randomBytes(6 * MiB), randomBytes(MiB));
    const put = storage.put('containers/c/slow', source);
    put.catch(() => undefined);
    await until(async () => (await temporaries()).length === 1);
    const [upload] = await temporaries();
    expect(upload!.since.getTime()).toBeGreaterThan(Date.now() - scaled(60_000));
    if (store === 's3') expect(upload!.key).toBe('containers/c/slow');
    await storage.removeTemporary(upload!.id);
    await storage.removeTemporary(upload!.id); // gone already: not an error
    release('go');
    await expect(put).rejects.toBeInstanceOf(Unavailable);
    expect(await storage.stat('containers/c/slow')).toBeNull();
    expect(await temporaries()).toEqual([]);
  });

  it('accepts only server-made keys', async () => {
    for (const key of ['', '/abs', 'a/../b', '..', 'a//b', 'a\\b', 'a/./b', 'a\0b']) {
      await expect(storage.stat(key), key).rejects.toThrow('invalid storage key');
    }
  });
});

describe('storage that cannot be reached', () => {
  it('local: answers Unavailable when the directory cannot be written', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-storage-'));
    const storage = new LocalStorage(path.join(root, 'blobs'));
    try {
      // A file where the key's directory should be (chmod would not stop root).
      await fs.mkdir(storage.root, { recursive: true });
      await fs.writeFile(path.join(storage.root, 'documents'), 'not a directory');
      const source = Readable.from([Buffer.from('x')]);
      await expect(storage.put('documents/ws/file_1', source)).rejects.toBeInstanceOf(Unavailable);
      expect(source.destroyed).toBe(true);
      expect(await collect(storage.listTemporary())).toEqual([]);
      await fs.rm(storage.root, { recursive: true });
      await fs.writeFile(storage.root, 'the root itself is a file');
      await expect(storage.put('k', Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(Unavailable);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('s3: answers Unavailable for a bucket that does not exist, and while the service is down', async () => {
    const s3 = await testS3();
    const missing = await createStorage(loadConfig(s3.env('sy-no-such-bucket')).storage);
    const source = Readable.from([Buffer.from('x')]);
    await expect(missing.put('k', source)).rejects.toBeInstanceOf(Unavailable);
    expect(source.destroyed).toBe(true);
    await expect(missing.get('k')).rejects.toBeInstanceOf(NotFound);
    const storage = await createStorage(loadConfig(s3.env(await s3.createBucket())).storage);
    await storage.put('k', Readable.from([Buffer.from('x')]));
    await s3.suspend();
    try {
      await expect(storage.put('k2', Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(Unavailable);
      await expect(storage.get('k')).rejects.toBeInstanceOf(Unavailable);
      await expect(storage.stat('k')).rejects.toBeInstanceOf(Unavailable);
      await expect(collect(storage.list(''))).rejects.toBeInstanceOf(Unavailable);
    } finally {
      await s3.resume();
    }
    expect((await readAll((await storage.get('k')).stream)).toString()).toBe('x');
  });
});

describe('STORAGE_URL', () => {
  const storageOf = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/srv/sy', ...env }).storage;

  it('defaults to DATA_DIR/blobs; file:// names another directory', () => {
    expect(storageOf({})).toEqual({ kind: 'local', root: '/srv/sy/blobs' });
    expect(storageOf({ STORAGE_URL: 'file:///var/lib/blobs' })).toEqual({ kind: 'local', root: '/var/lib/blobs' });
    expect(storageOf({ STORAGE_URL: 'file://relative/dir' })).toEqual({ kind: 'local', root: path.resolve('relative/dir') });
  });

  it('s3:// names a bucket and an optional prefix; the AWS variables configure the client', () => {
    expect(storageOf({ STORAGE_URL: 's3://my-bucket' })).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: '',
      region: undefined,
      endpoint: undefined,
      forcePathStyle: false,
      credentials: undefined,
    });
    expect(
      storageOf({
        STORAGE_URL: 's3://my.bucket/switchyard/prod/',
        AWS_ACCESS_KEY_ID: 'id',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
        S3_FORCE_PATH_STYLE: '1',
      }),
    ).toEqual({
      kind: 's3',
      bucket: 'my.bucket',
      prefix: 'switchyard/prod/',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    expect(
      storageOf({ STORAGE_URL: 's3://b-1/p', AWS_REGION: 'eu-west-3', AWS_SESSION_TOKEN: 't', AWS_ACCESS_KEY_ID: 'i', AWS_SECRET_ACCESS_KEY: 's' }),
    ).toMatchObject({
      region: 'eu-west-3',
      prefix: 'p/',
      credentials: { accessKeyId: 'i', secretAccessKey: 's', sessionToken: 't' },
    });
  });

  it.each([
    ['STORAGE_URL', 's3://'],
    ['STORAGE_URL', 's3://UPPER'],
    ['STORAGE_URL', 's3://bucket/a//b'],
    ['STORAGE_URL', 's3://bucket/a b'],
    ['STORAGE_URL', 'file://'],
    ['STORAGE_URL', '/just/a/path'],
    ['AWS_ENDPOINT_URL_S3', 'localhost:9000'],
    ['S3_FORCE_PATH_STYLE', 'yes'],
    ['STORAGE_SWEEP_INTERVAL_MS', '-1'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('refuses one AWS key without the other', () => {
    expect(() => loadConfig({ AWS_ACCESS_KEY_ID: 'id' })).toThrow('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  });
});

describe('container ids', () => {
  it('keeps a clean session key, and the same key always names the same container', () => {
    expect(containerIdOf('abc_DEF-123')).toBe('sess_abc_DEF-123');
    expect(containerIdOf('abc_DEF-123')).toBe(containerIdOf('abc_DEF-123'));
  });

  it('sanitises other keys and tells apart keys that sanitise alike', () => {
    const a = containerIdOf('user@example.com/chat 1');
    const b = containerIdOf('user_example_com_chat_1');
    const c = containerIdOf('user#example.com/chat.1');
    expect(a).toMatch(/^sess_user_example_com_chat_1_[0-9a-f]{12}$/);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(containerIdOf('x'.repeat(500))).toMatch(/^sess_x{64}_[0-9a-f]{12}$/);
  });

  it('gives a restarted session its own id with -r<nonce>', () => {
    const first = containerIdOf('s1', true);
    const second = containerIdOf('s1', true);
    expect(first).toMatch(/^sess_s1-r[0-9a-f]{12}$/);
    expect(second).not.toBe(first);
    // A raw key that looks like a restart is not mistaken for one.
    expect(containerIdOf(first.slice(5))).not.toBe(first);
  });
});

describe('file ids', () => {
  it('round-trip clean relative paths', () => {
    for (const p of ['a.txt', 'out/plots/fig 1.png', 'ünïcödé/数据.csv', '.hidden', 'a..b/c']) {
      expect(decodeFileId(encodeFileId(p))).toBe(p);
    }
    // Correct padding, as Python's urlsafe_b64encode writes it, is accepted.
    expect(decodeFileId(`cfile_${Buffer.from('ab').toString('base64')}`)).toBe('ab');
  });

  const bad: Array<[string, string]> = [
    ['a ".." segment', encodeFileId('../etc/passwd')],
    ['a ".." segment inside', encodeFileId('a/../../b')],
    ['a trailing ".."', encodeFileId('a/..')],
    ['a "." segment', encodeFileId('./a')],
    ['an absolute path', encodeFileId('/etc/passwd')],
    ['a drive path', encodeFileId('C:/x')],
    ['a NUL byte', encodeFileId('a\0b')],
    ['a backslash', encodeFileId('..\\..\\x')],
    ['an empty segment', encodeFileId('a//b')],
    ['a trailing slash', encodeFileId('a/')],
    ['an empty path', 'cfile_'],
    ['a control character', encodeFileId('a\nb')],
    ['no prefix', Buffer.from('a.txt').toString('base64url')],
    ['a wrong prefix', `file_${Buffer.from('a.txt').toString('base64url')}`],
    ['standard base64 characters', `cfile_${Buffer.from([0xfb, 0xff]).toString('base64')}`],
    ['a base64url length that cannot be', 'cfile_YWJjZ'],
    ['non-zero trailing bits', 'cfile_YR'],
    ['bad padding', 'cfile_YQ='],
    ['invalid UTF-8', `cfile_${Buffer.from([0xff, 0xfe]).toString('base64url')}`],
    ['percent signs', 'cfile_%2E%2E'],
  ];
  it.each(bad)('reject %s with Invalid', (_what, id) => {
    expect(() => decodeFileId(id)).toThrow(Invalid);
  });
});
