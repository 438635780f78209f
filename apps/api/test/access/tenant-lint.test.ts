// The lint that keeps tenancy in access/ (lint/tenant-filters.grit, wired in biome.jsonc): biome
// runs with the project's own configuration on sample service files under apps/api/src/modules/ of
// a scratch copy, and must refuse each hand-spelled tenant filter, and pass what access/ builds.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const biome = path.join(root, 'node_modules', '.bin', 'biome');

const HEADER = `import { Prisma } from '@switchyard/db';
declare const actor: { organizationId: string; key: { id: string } };
declare const organizationId: string;
declare const row: { organization_id: string };
declare const tenant: { where(alias?: string): string };
declare function tenantWhere(a: unknown): { organization_id: string };
`;

/** Sample services: each refused (`refused: true`) or passed by the rule. */
const SAMPLES: Record<string, { refused: boolean; body: string }> = {
  where: { refused: true, body: 'export const where = { id: "x", organization_id: actor.organizationId };' },
  compoundKey: { refused: true, body: 'export const where = { organization_id_user_id: { organization_id: actor.organizationId, user_id: "u" } };' },
  data: { refused: true, body: 'export const data = { organization_id: organizationId, name: "n" };' },
  positional: { refused: true, body: 'export const text = `SELECT 1 FROM t WHERE t.organization_id = $1 AND t.id = $2`;' },
  positionalString: { refused: true, body: "export const text = 'SELECT 1 FROM t WHERE organization_id = $3';" },
  named: { refused: true, body: 'export const text = `SELECT 1 FROM t WHERE t.organization_id = :organization_id AND t.id = :id`;' },
  template: { refused: true, body: `export const sql = Prisma.sql\`SELECT 1 FROM t WHERE organization_id = ${'$'}{organizationId}\`;` },
  helpers: { refused: false, body: 'export const where = { ...tenantWhere(actor), id: "x" };' },
  rowCopy: { refused: false, body: 'export const copy = { organization_id: row.organization_id };' },
  joinOnColumns: { refused: false, body: 'export const text = `SELECT 1 FROM g JOIN organizations o ON g.organization_id = o.id`;' },
  clauseFromAccess: { refused: false, body: `export const text = \`SELECT 1 FROM g WHERE ${'$'}{tenant.where("g")} AND g.id = $6\`;` },
  namedClauseFromAccess: { refused: false, body: `export const text = \`SELECT 1 FROM g WHERE ${'$'}{tenant.where("g")} AND g.id = :generation_id\`;` },
};

const scratch = mkdtempSync(path.join(tmpdir(), 'tenant-lint-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('lint/tenant-filters.grit', () => {
  it('refuses every hand-spelled tenant filter in apps/api/src/modules/, and passes the helpers of access/', async () => {
    cpSync(path.join(root, 'biome.jsonc'), path.join(scratch, 'biome.jsonc'));
    cpSync(path.join(root, 'lint'), path.join(scratch, 'lint'), { recursive: true });
    const dir = path.join(scratch, 'apps', 'api', 'src', 'modules', 'sample');
    mkdirSync(dir, { recursive: true });
    for (const [name, sample] of Object.entries(SAMPLES)) writeFileSync(path.join(dir, `${name}.service.ts`), `${HEADER}${sample.body}\n`);
    // The scratch copy is no git repository: the configuration's VCS integration is off there.
    const run = await promisify(execFile)(biome, ['lint', '--vcs-enabled=false', '--max-diagnostics=none', 'apps'], { cwd: scratch }).then(
      (out) => ({ code: 0, output: out.stdout + out.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    const flagged = new Set([...run.output.matchAll(/sample\/(\w+)\.service\.ts:\d+:\d+ plugin/g)].map((m) => m[1]));
    const expected = Object.entries(SAMPLES)
      .filter(([, sample]) => sample.refused)
      .map(([name]) => name);
    expect([...flagged].sort(), run.output).toEqual(expected.sort());
    expect(run.code, 'biome lint fails on a refused sample').not.toBe(0);
  });
});
