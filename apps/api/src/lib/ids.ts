import { randomBytes } from 'node:crypto';

/** An opaque id with a readable prefix: `org_3f9c...`. 96 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
