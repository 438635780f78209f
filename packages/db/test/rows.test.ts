// Raw SQL rows typed at the boundary (rows.ts): a statement whose SQL and row schema disagree fails
// loudly the first time a test runs it, through node-postgres (queryRows) and through Prisma's raw
// queries (rawRows) alike.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createDb, queryRows, statement, type Db } from '../src/client.js';
import { $Enums, OrgRole, Prisma } from '../src/generated/prisma/client.js';
import { columnsOf, decimalText, ORG_ROLE_LABELS, orgRoleColumn, rawRows, RowMismatch, rowOrNulls } from '../src/rows.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
  db = createDb(database.url, { poolMax: 2 });
});
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});

const mismatch = (run: Promise<unknown>) => expect(run).rejects.toThrow(RowMismatch);

describe('queryRows', () => {
  it("answers the row schema's output", async () => {
    const stmt = statement(
      `SELECT 'org:admin'::org_role AS role, 12.5::numeric AS amount, '2026-01-02T03:04:05Z'::timestamptz AS at`,
      z.object({ role: orgRoleColumn, amount: z.string().transform(Number), at: z.date() }),
    );
    const rows = await queryRows(db, stmt, []);
    expect(rows).toEqual([{ role: OrgRole.admin, amount: 12.5, at: new Date('2026-01-02T03:04:05Z') }]);
  });

  it('fails when the SQL renames a column the schema names, even with no rows', async () => {
    const row = z.object({ id: z.string(), workspace_id: z.string() });
    await mismatch(queryRows(db, statement('SELECT id, workspace_id AS workspace FROM api_keys', row), []));
    await mismatch(queryRows(db, statement('SELECT id, workspace_id AS workspace FROM api_keys WHERE false', row), []));
    await expect(queryRows(db, statement('SELECT id, workspace_id FROM api_keys WHERE false', row), [])).resolves.toEqual([]);
  });

  it('fails when the SQL answers a column the schema does not name, or one twice', async () => {
    await mismatch(queryRows(db, statement(`SELECT 'a' AS id, 'b' AS extra`, z.object({ id: z.string() })), []));
    await mismatch(queryRows(db, statement(`SELECT 'a' AS id, 'b' AS id`, z.object({ id: z.string() })), []));
  });

  it('fails on an enum label the schema does not know: Prisma names org:admin `admin`', async () => {
    const prismaValues = statement(`SELECT 'org:admin'::org_role AS role`, z.object({ role: z.enum(OrgRole) }));
    const error = await queryRows(db, prismaValues, []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RowMismatch);
    expect(String(error)).toMatch(/role/);
    expect(String(error)).toMatch(/org:admin/);
  });

  it('fails on a value of another type: numeric comes as text', async () => {
    await mismatch(queryRows(db, statement('SELECT 1.5::numeric AS usage', z.object({ usage: z.number() })), []));
  });

  it('reads a finite numeric as decimalText, and fails on NaN or Infinity', async () => {
    const row = z.object({ usage: decimalText });
    const [read] = await queryRows(db, statement(`SELECT '-0.000000001500'::numeric(28,12) AS usage`, row), []);
    expect(read).toEqual({ usage: '-0.000000001500' });
    for (const value of ['NaN', 'Infinity', '-Infinity']) {
      await mismatch(queryRows(db, statement(`SELECT '${value}'::numeric AS usage`, row), []));
    }
  });

  it('types a LEFT JOIN that found nothing as a row of nulls (rowOrNulls)', async () => {
    const stmt = statement(
      `SELECT t.total, k.id, k.name FROM (SELECT 0 AS total) t LEFT JOIN api_keys k ON false`,
      rowOrNulls({ total: z.number() }, { id: z.string(), name: z.string() }),
    );
    const [row] = await queryRows(db, stmt, []);
    expect(row).toEqual({ total: 0, id: null, name: null });
    await mismatch(queryRows(db, statement(`SELECT 0 AS total, NULL AS id, 'x' AS name`, stmt.row), []));
  });

  it('expects no columns from a statement declared without a schema', async () => {
    await expect(queryRows(db, statement('SELECT FROM api_keys WHERE false'), [])).resolves.toEqual([]);
    await mismatch(queryRows(db, statement('SELECT 1 AS one'), []));
  });
});

describe('rawRows (Prisma)', () => {
  it('parses $queryRaw and $queryRawUnsafe rows with the schema', async () => {
    const row = z.object({ role: orgRoleColumn, n: z.bigint() });
    expect(await rawRows(db, row, Prisma.sql`SELECT ${'org:member'}::org_role::text AS role, 7::bigint AS n`)).toEqual([{ role: OrgRole.member, n: 7n }]);
    expect(await rawRows(db, row, { text: `SELECT $1::org_role::text AS role, 7::bigint AS n`, values: ['org:admin'] })).toEqual([
      { role: OrgRole.admin, n: 7n },
    ]);
  });

  it('fails on a renamed column or an unknown label, inside a transaction too', async () => {
    const row = z.object({ user_id: z.string(), role: orgRoleColumn });
    await mismatch(rawRows(db, row, Prisma.sql`SELECT 'u' AS user, 'org:admin' AS role`));
    await mismatch(db.$transaction((tx) => rawRows(tx, row, Prisma.sql`SELECT 'u' AS user_id, 'admin' AS role`)));
  });
});

describe('row schemas', () => {
  it('are objects of columns, or unions of objects with the same columns', () => {
    expect(columnsOf(z.object({ b: z.string(), a: z.number() }).transform((r) => r.a))).toEqual(['a', 'b']);
    expect(() => columnsOf(z.string())).toThrow(/object of columns/);
    expect(() => columnsOf(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]))).toThrow(/same columns/);
  });

  // Raw SQL reads enum labels, and the row schemas check them with Prisma's enum objects
  // (z.enum(LimitReset)): they must be the database's labels, except org_role's, which
  // schema.prisma maps (@map) and orgRoleColumn translates.
  it("parse every enum with the database's own labels", async () => {
    const labels = async (type: string) =>
      (await rawRows(db, z.object({ label: z.string() }), { text: `SELECT unnest(enum_range(NULL::${type}))::text AS label`, values: [] })).map((r) => r.label);
    const enums = Object.entries($Enums) as [string, Record<string, string>][];
    expect(enums.length).toBeGreaterThan(5);
    for (const [name, values] of enums) {
      const type = name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase();
      const expected = name === 'OrgRole' ? Object.values(ORG_ROLE_LABELS) : Object.values(values);
      expect(await labels(type), type).toEqual(expected);
    }
  });
});
