// Fixtures of the catalog and generation tests: the demo catalog, keys and recorded generations.
// Everything goes through the server's own procedures.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from '@switchyard/db';
import type { Catalog, RecordGenerationInput } from '@switchyard/schema';
import { expect } from 'vitest';
import { generateApiKey, hashApiKey, maskApiKey } from '../src/access/key-format.js';
import type { TestServer } from '../src/testing/test-server.js';
import { trpc } from './fixtures-trpc.js';

export const demoCatalog = JSON.parse(readFileSync(fileURLToPath(new URL('../../../demo/catalog.json', import.meta.url)), 'utf8')) as Catalog;

export async function importDemoCatalog(server: TestServer): Promise<void> {
  const { status, data } = await trpc(server, 'models.import', demoCatalog);
  expect(status).toBe(200);
  expect(data.models).toBe(demoCatalog.models.length);
}

/** A key of the management key's organization (regular unless asked), made through keys.create. */
export async function createKey(
  server: TestServer,
  input: Record<string, unknown> = {},
  adminKey = server.managementKey,
): Promise<{ key: string; hash: string }> {
  const { status, data } = await trpc(server, 'keys.create', { name: 'test key', ...input }, { key: adminKey });
  expect(status).toBe(200);
  return { key: data.key, hash: data.data.hash };
}

let sequence = 0;
export const generationId = () => `gen-${Date.now().toString(36)}-${(sequence++).toString(36)}`;

/** Records a generation through generations.record (as the platform); returns its id. */
export async function record(server: TestServer, input: Partial<RecordGenerationInput> & { api_key_hash: string }): Promise<string> {
  const id = input.id ?? generationId();
  const { status, data, error } = await trpc(server, 'generations.record', { model: 'openai/gpt-4o', ...input, id });
  expect(status, JSON.stringify(error)).toBe(200);
  expect(data.id).toBe(id);
  return id;
}

/** Another user of an organization, with a regular key of their own (written to the database). */
export async function createMember(db: Db, organizationId: string): Promise<{ userId: string; key: string; hash: string }> {
  const suffix = randomUUID().slice(0, 8);
  const userId = `user_${suffix}`;
  const key = generateApiKey();
  const organization = await db.organization.findUniqueOrThrow({ where: { id: organizationId } });
  await db.$transaction(async (tx) => {
    await tx.user.create({ data: { id: userId, email: `${suffix}@example.com` } });
    await tx.organizationMember.create({ data: { organization_id: organizationId, user_id: userId, first_name: 'Member', last_name: suffix } });
    await tx.apiKey.create({
      data: {
        organization_id: organizationId,
        workspace_id: organization.default_workspace_id!,
        creator_user_id: userId,
        hash: hashApiKey(key),
        label: maskApiKey(key),
        name: 'member key',
      },
    });
  });
  return { userId, key, hash: hashApiKey(key) };
}
