// The recording floor's statements are the server's: the recorder's statement, as
// bench/src/record-statement.ts takes it from the server's package, is what the server sends, followed in the same
// transaction by the events statement the server's own function builds; and the floor's
// transaction writes what the server's writes for the same generation.
import { createRequire } from 'node:module';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { createSwitchyardClient } from '@switchyard/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventsStatement, RECORD_TEXT, type RecordingClient, writeRecording } from '../src/record-statement.js';

interface PgClient extends RecordingClient {
  connect(): Promise<void>;
  end(): Promise<void>;
}
const pg = createRequire(import.meta.resolve('@switchyard/db'))('pg') as { Client: new (options: { connectionString: string }) => PgClient };

let server: TestServer;
let sent: { query: string; params: string }[] = [];
let keyHash: string;
let client: PgClient;

beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), onQuery: (event) => sent.push(event) });
  const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
  keyHash = (await admin.keys.create.mutate({ name: 'recording floor' })).data.hash;
  client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await server?.close();
});

const content = { input: { messages: [{ role: 'user', content: 'Say hello.' }] }, output: { completion: 'Hello!' } };

/** The key's lifetime usage and requests of its daily rollups, as the recording left them. */
async function keyFigures(hash: string): Promise<{ usage: string; requests: string }> {
  const { rows } = await client.query({
    text: `SELECT k.usage::text AS usage, coalesce(sum(d.request_count), 0)::text AS requests
             FROM api_keys k LEFT JOIN key_usage_daily d ON d.api_key_id = k.id WHERE k.hash = $1 GROUP BY k.usage`,
    values: [hash],
  });
  return rows[0] as { usage: string; requests: string };
}

/** A generation's columns as stored, but for those that differ between two recordings (its id and times). */
async function storedRow(id: string): Promise<Record<string, unknown>> {
  const { rows } = await client.query({ text: `SELECT to_jsonb(g) - 'id' - 'created_at' AS row FROM generations g WHERE id = $1`, values: [id] });
  return (rows[0] as { row: Record<string, unknown> }).row;
}

describe('the recording floor', () => {
  it("sends the server's recording statement and then its events statement, as the server sends them for one generation", async () => {
    sent = [];
    const platform = createSwitchyardClient({ url: server.url, apiKey: server.platformKey });
    const input = { id: 'gen-floor-server-1', api_key_hash: keyHash, model: 'openai/gpt-4o-mini', usage: 0.0001, total_cost: 0.0001, content };
    const answer = await platform.generations.record.mutate(input);
    expect(answer.recorded).toBe(true);

    const recording = sent.findIndex((event) => event.query === RECORD_TEXT);
    expect(recording, 'the server sent the text of RECORD_TEXT').toBeGreaterThanOrEqual(0);
    const [rows, extras] = JSON.parse(sent[recording]!.params) as [string, string, string];
    expect(JSON.parse(rows)).toMatchObject([{ id: input.id }]);
    expect(JSON.parse(extras)).toMatchObject([{ id: input.id, byok: '0', content, reservation: null }]);
    // After it, in its transaction, the events statement as the server's function builds it (the pool's
    // other work may send statements in between).
    const [key] = (await client.query({ text: 'SELECT id::text, organization_id, workspace_id::text FROM api_keys WHERE hash = $1', values: [keyHash] }))
      .rows as { id: string; organization_id: string; workspace_id: string }[];
    const events = eventsStatement(
      [{ id: input.id, content_stored: true, organization_id: key!.organization_id, workspace_id: key!.workspace_id, api_key_id: key!.id }],
      new Date(),
    );
    const alerts = sent.slice(recording + 1).find((event) => event.query === events.text);
    expect(alerts, 'the server sent the events statement after it').toBeDefined();
    expect(JSON.parse(alerts!.params)).toHaveLength(events.values.length);
  });

  it("writes, for the same generation, the row and the totals the server's recording writes", async () => {
    const before = await keyFigures(keyHash);
    const { rows } = await client.query({
      text: 'SELECT jsonb_strip_nulls(to_jsonb(g)) AS row FROM generations g WHERE id = $1',
      values: ['gen-floor-server-1'],
    });
    const template = { row: (rows[0] as { row: Record<string, unknown> }).row, content };

    const recorded = await writeRecording(client, template, ['gen-floor-plain-1', 'gen-floor-plain-2'], new Date());
    expect(recorded.map((r) => r.id).sort()).toEqual(['gen-floor-plain-1', 'gen-floor-plain-2']);
    expect(recorded.every((r) => r.content_stored)).toBe(true);

    // Each floor generation is the server's but for its id and time, and counts as one did.
    const server = await storedRow('gen-floor-server-1');
    expect(await storedRow('gen-floor-plain-1')).toEqual(server);
    expect(await storedRow('gen-floor-plain-2')).toEqual(server);
    const after = await keyFigures(keyHash);
    expect(Number(after.requests)).toBe(Number(before.requests) + 2);
    expect(Number(after.usage)).toBeCloseTo(Number(before.usage) + 0.0002, 10);
    // Its contents were stored too.
    const stored = await client.query({ text: `SELECT count(*)::int AS n FROM generation_contents WHERE generation_id LIKE 'gen-floor-plain-%'` });
    expect(stored.rows).toEqual([{ n: 2 }]);
  });
});
