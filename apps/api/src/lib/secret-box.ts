// Encryption at rest of provider secrets: AES-256-GCM with a random 96-bit IV per secret and the
// credential's id as additional data (a ciphertext copied onto another row does not decrypt).
//
// Ciphertext format: "v1.<key id>.<iv>.<tag>.<data>" (base64url parts). The key id is the first 8
// bytes of SHA-256 of the key, in hex, so the ring knows which key sealed a secret: after a rotation
// (new key first, old keys after it) old secrets still open, and reseal() moves them to the new key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

const FORMAT = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
export const SECRET_KEY_FILE = 'secret-key';

export class SecretKeyError extends Error {}

interface RingKey {
  id: string;
  key: Buffer;
}

export class SecretBox {
  private readonly keys: RingKey[];

  /** keys[0] seals; every key opens what it sealed. */
  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new SecretKeyError('at least one secret key is required');
    this.keys = keys.map((key) => {
      if (key.length !== KEY_BYTES) throw new SecretKeyError(`a secret key must be ${KEY_BYTES} bytes`);
      return { id: keyIdOf(key), key };
    });
  }

  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  seal(plaintext: string, associatedData: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  open(sealed: string, associatedData: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new SecretKeyError('unknown ciphertext format');
    const [, id, iv, tag, data] = parts as [string, string, string, string, string];
    const ringKey = this.keys.find((k) => k.id === id);
    if (!ringKey) throw new SecretKeyError(`no secret key with id ${id} is configured`);
    const decipher = createDecipheriv('aes-256-gcm', ringKey.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Re-encrypts under the current key (after a rotation). */
  reseal(sealed: string, associatedData: string): string {
    return this.seal(this.open(sealed, associatedData), associatedData);
  }
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** One key as configured: 64 hex characters or base64/base64url of 32 bytes. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64url');
  if (key.length !== KEY_BYTES) throw new SecretKeyError('must be 32 bytes as 64 hex characters or base64');
  return key;
}

/** A comma-separated ring: the first key seals, all of them open (rotation: prepend the new key). */
export function parseSecretKeyRing(text: string): Buffer[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map(parseSecretKey);
}

/**
 * The ring from SWITCHYARD_SECRET_KEY when set; otherwise the key in DATA_DIR/secret-key, generated
 * (mode 0600) on first start.
 */
export async function loadSecretBox(options: { configured: Buffer[] | undefined; dataDir: string }): Promise<{
  box: SecretBox;
  source: 'env' | 'file' | 'generated';
  file?: string;
}> {
  if (options.configured && options.configured.length > 0) return { box: new SecretBox(options.configured), source: 'env' };
  const file = path.join(options.dataDir, SECRET_KEY_FILE);
  await fs.mkdir(options.dataDir, { recursive: true });
  // Written whole to a temporary file, then linked into place: link() fails if the file exists, so
  // a concurrent start never reads a half-written key and both processes end up with the same one.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600 });
  let source: 'file' | 'generated' = 'generated';
  try {
    await fs.link(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    source = 'file';
  } finally {
    await fs.rm(tmp, { force: true });
  }
  const text = await fs.readFile(file, 'utf8');
  try {
    return { box: new SecretBox(parseSecretKeyRing(text)), source, file };
  } catch (error) {
    throw new SecretKeyError(`${file}: ${(error as Error).message}`);
  }
}
