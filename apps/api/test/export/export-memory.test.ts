// The export streams (docs/export.md): 20,000 generations with 4 KB of content
// each (a file of about 100 MiB) are exported from a server process of their own, as `pnpm start`
// runs it, while its resident memory is sampled from /proc. Holding the file, or the organization's
// generations, anywhere would add 100 MiB or more; streaming adds a few pages and the collector's lag.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@switchyard/db';
import { createTestDatabase, scaled } from '@switchyard/db/testing';
import { ExportTrailerSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seedGenerations } from '../fixtures-export.js';
import { start, stop, type Proc } from '../fixtures-process.js';

const COUNT = 20_000;
/** Well under the file's size (a buffered export would exceed it); what streaming measured is in docs/export.md. */
const FLAT_MIB = 64;
const MANAGEMENT_KEY = `sk-sy-v1-${'e7'.repeat(32)}`;

let proc: Proc;
let dataDir: string;
beforeAll(async () => {
  const database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-export-memory-'));
  proc = await start({
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    SWITCHYARD_BOOTSTRAP_KEY: MANAGEMENT_KEY,
    SWITCHYARD_PLATFORM_KEY: `sk-sy-platform-v1-${'e8'.repeat(32)}`,
    STORAGE_SWEEP_INTERVAL_MS: '0',
  });
  const db = createDb(database.url);
  try {
    const key = await db.apiKey.findFirstOrThrow({ where: { is_management_key: true } });
    await seedGenerations(db, { organizationId: key.organization_id, workspaceId: key.workspace_id, keyId: key.id, userId: key.creator_user_id }, COUNT);
  } finally {
    await db.$disconnect();
  }
}, scaled(180_000));
afterAll(async () => {
  if (proc) await stop(proc);
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** The server process's resident memory, in MiB. */
function rssMiB(): number {
  const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

/** Reads an export chunk by chunk (never whole), sampling the server's RSS; answers its size, generations and trailer. */
async function streamExport(sample: () => void) {
  const res = await fetch(`${proc.url}/api/v1/export`, { headers: { authorization: `Bearer ${MANAGEMENT_KEY}` } });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  let bytes = 0;
  let generations = 0;
  let last = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    const lines = (rest + value).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('{"type":"generation"')) generations += 1;
      last = line;
    }
    sample();
  }
  return { bytes, generations, trailer: ExportTrailerSchema.parse(JSON.parse(last)) };
}

describe('an export of 20,000 generations with content', () => {
  it(
    "streams them all while the server's RSS stays flat",
    async () => {
      // The first export pays one-time costs (code paths, the query plans, the collector's heap
      // sizes): measured and shown, not asserted. A server that held the file would keep that much
      // heap after it, which the second export's baseline would then hide: the first's growth shows it.
      const start = rssMiB();
      let first = start;
      await streamExport(() => (first = Math.max(first, rssMiB())));
      const baseline = rssMiB();
      let peak = baseline;
      let samples = 0;
      const sample = () => {
        if (samples++ % 16 === 0) peak = Math.max(peak, rssMiB());
      };
      const { bytes, generations, trailer } = await streamExport(sample);
      expect(generations).toBe(COUNT);
      expect(trailer.counts.generation).toBe(COUNT);
      expect(bytes).toBeGreaterThan(COUNT * 4_000);
      const growth = peak - baseline;
      console.info(
        `export of ${COUNT} generations (${(bytes / 1024 / 1024).toFixed(0)} MiB): server RSS ${start.toFixed(0)} MiB before the first, which grew it by ${(first - start).toFixed(1)} MiB; ${baseline.toFixed(0)} MiB before the second, which grew it by ${growth.toFixed(1)} MiB`,
      );
      expect(growth).toBeLessThan(FLAT_MIB);
      // Even with its one-time costs, the first export grew the server by less than the file it sent.
      expect(first - start).toBeLessThan(bytes / 1024 / 1024);
    },
    scaled(300_000),
  );
});
