// `switchyard export --out FILE` (docs/export.md) against the real server: the file
// is the whole export (header first, trailer last) and appears only when complete; an existing
// file is kept unless --force; a refusal or an export cut short leaves no file and exits 1.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '@switchyard/api/testing';
import { ExportHeaderSchema, ExportTrailerSchema } from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { run } from '../src/cli.js';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate') });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-export-'));
});
afterAll(async () => {
  await server?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function switchyard(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (t) => (stdout += `${t}\n`),
    stderr: (t) => (stderr += `${t}\n`),
    env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, SWITCHYARD_PLATFORM_KEY: server.platformKey, ...env },
    cwd: dir,
  });
  return { code, stdout, stderr };
}

describe('switchyard export', () => {
  it('writes the whole export to --out and prints the counts from its trailer', async () => {
    const demo = await switchyard(['demo', '--json']);
    expect(demo, demo.stderr).toMatchObject({ code: 0 });
    const done = await switchyard(['export', '--out', 'org.jsonl', '--json']);
    expect(done, done.stderr).toMatchObject({ code: 0, stderr: '' });
    const file = path.join(dir, 'org.jsonl');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(ExportHeaderSchema.parse(JSON.parse(lines[0]!)).organization_id).toBe(server.organizationId);
    const trailer = ExportTrailerSchema.parse(JSON.parse(lines.at(-1)!));
    expect(trailer.counts.generation).toBeGreaterThan(0);
    expect(JSON.parse(done.stdout)).toEqual({ file, bytes: readFileSync(file).length, counts: trailer.counts });
    expect(existsSync(`${file}.partial`)).toBe(false);

    const human = await switchyard(['export', '--out', 'again.jsonl']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^TYPE\s+RECORDS\n/);
    expect(human.stdout).toMatch(new RegExp(`generation\\s+${trailer.counts.generation}\\n`));
  });

  it('keeps an existing file unless --force', async () => {
    const file = path.join(dir, 'kept.jsonl');
    writeFileSync(file, 'mine\n');
    const refused = await switchyard(['export', '--out', 'kept.jsonl']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('kept.jsonl exists: pass --force to replace it');
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
    const forced = await switchyard(['export', '--out', 'kept.jsonl', '--force']);
    expect(forced, forced.stderr).toMatchObject({ code: 0 });
    expect(readFileSync(file, 'utf8')).toMatch(/^\{"type":"export"/);
  });

  it("exits 1 with the server's refusal and writes nothing (a regular key); 2 without --out", async () => {
    const created = await switchyard(['keys', 'create', '--name', 'plain', '--json']);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const refused = await switchyard(['export', '--out', 'refused.jsonl'], { SWITCHYARD_API_KEY: key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('403');
    expect(existsSync(path.join(dir, 'refused.jsonl'))).toBe(false);
    expect(existsSync(path.join(dir, 'refused.jsonl.partial'))).toBe(false);
    expect((await switchyard(['export'])).code).toBe(2);
  });

  it('exits 1 and leaves no file when the export ends without its trailer', async () => {
    // A server that sends the header and one record, then ends the answer as if cut short.
    const cut = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(
        '{"type":"export","format":"switchyard.export","version":1,"organization_id":"org_x","created_at":"2026-01-01T00:00:00.000Z"}\n{"type":"settings"}\n',
      );
    });
    await new Promise<void>((resolve) => cut.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(cut.address() as AddressInfo).port}`;
      const result = await switchyard(['export', '--out', 'cut.jsonl'], { SWITCHYARD_URL: url });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('the export was cut short (no trailer line); nothing written to cut.jsonl');
      expect(existsSync(path.join(dir, 'cut.jsonl'))).toBe(false);
      expect(existsSync(path.join(dir, 'cut.jsonl.partial'))).toBe(false);
    } finally {
      await new Promise((resolve) => cut.close(resolve));
    }
  });
});
