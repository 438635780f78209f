// The local-filesystem BlobStorage and the sandbox id codecs, without a server.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { PayloadTooLarge, Unavailable, NotFound, Invalid } from '../src/errors.js';
import { containerIdOf, decodeFileId, encodeFileId } from '../src/modules/files/sandbox-ids.js';
import { LocalStorage } from '../src/storage/local-storage.js';
import { sha256 } from './fixtures-files.js';

let root: string;
let storage: LocalStorage;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-storage-'));
  storage = new LocalStorage(path.join(root, 'blobs'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every file under a directory, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('LocalStorage', () => {
  it('stores a stream and streams it back byte for byte, with size and checksum', async () => {
    const bytes = randomBytes(300_000);
    const put = await storage.put('a/b/c', Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]));
    expect(put).toEqual({ size: bytes.length, sha256: sha256(bytes) });
    expect(await storage.stat('a/b/c')).toEqual({ size: bytes.length });
    const got = await storage.get('a/b/c');
    expect(got.size).toBe(bytes.length);
    expect((await readAll(got.stream)).equals(bytes)).toBe(true);
    expect(await filesUnder(storage.root)).toEqual([path.join('a', 'b', 'c')]);
  });

  it('replaces atomically, deletes, and reports absence', async () => {
    await storage.put('k', Readable.from([Buffer.from('one')]));
    await storage.put('k', Readable.from([Buffer.from('two!')]));
    expect((await readAll((await storage.get('k')).stream)).toString()).toBe('two!');
    await storage.delete('k');
    await storage.delete('k');
    expect(await storage.stat('k')).toBeNull();
    await expect(storage.get('k')).rejects.toBeInstanceOf(NotFound);
  });

  it('leaves nothing visible, and no temp file, when the source breaks mid-write', async () => {
    await storage.put('keep', Readable.from([Buffer.from('old')]));
    async function* breaking() {
      yield randomBytes(100_000);
      throw new Error('source broke');
    }
    await expect(storage.put('keep', Readable.from(breaking()))).rejects.toThrow('source broke');
    await expect(storage.put('new', Readable.from(breaking()))).rejects.toThrow('source broke');
    expect((await readAll((await storage.get('keep')).stream)).toString()).toBe('old');
    expect(await storage.stat('new')).toBeNull();
    expect(await filesUnder(storage.root)).toEqual(['keep']);
  });

  it('refuses a stream over maxBytes with PayloadTooLarge and stores nothing', async () => {
    await expect(storage.put('big', Readable.from([randomBytes(600), randomBytes(600)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(
      PayloadTooLarge,
    );
    expect(await filesUnder(storage.root)).toEqual([]);
    expect((await storage.put('exact', Readable.from([randomBytes(1000)]), { maxBytes: 1000 })).size).toBe(1000);
  });

  it('answers Unavailable when the directory cannot be written', async () => {
    // A file where the key's directory should be (chmod would not stop root).
    await fs.mkdir(storage.root, { recursive: true });
    await fs.writeFile(path.join(storage.root, 'documents'), 'not a directory');
    const source = Readable.from([Buffer.from('x')]);
    await expect(storage.put('documents/ws/file_1', source)).rejects.toBeInstanceOf(Unavailable);
    expect(source.destroyed).toBe(true);
    expect(await filesUnder(path.join(storage.root, '.tmp'))).toEqual([]);
    await fs.rm(storage.root, { recursive: true });
    await fs.writeFile(storage.root, 'the root itself is a file');
    await expect(storage.put('k', Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(Unavailable);
  });

  it('accepts only server-made keys', async () => {
    for (const key of ['', '/abs', 'a/../b', '..', 'a//b', 'a\\b', 'a/./b', 'a\0b']) {
      await expect(storage.stat(key), key).rejects.toThrow('invalid storage key');
    }
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
