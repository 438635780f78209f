// Named parameters (src/named-parameters.ts): the rewrite into $n, what is not a name, and a named
// statement run on real PostgreSQL through queryRows and inTransaction.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { createDb, inTransaction, namedStatement, orderedValues, queryRows, statement, type Db } from '../src/client.js';
import { compileNamedParameters, positionalValues } from '../src/named-parameters.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

describe('compileNamedParameters', () => {
  it('numbers names in order of first use, one parameter per name', () => {
    expect(compileNamedParameters('SELECT :b, :a, :b_2, :b')).toEqual({ text: 'SELECT $1, $2, $3, $1', names: ['b', 'a', 'b_2'] });
  });

  it('leaves casts, literals, quoted identifiers, dollar-quoted strings and comments alone', () => {
    const sql = `SELECT :id::uuid, '12:00', 'it''s :not', "a:b", $$ :no $$, $t$ :no $t$, x[1:2] -- :no
      /* :no */ FROM t WHERE k = ANY(:ids::text[])`;
    const { text, names } = compileNamedParameters(sql);
    expect(names).toEqual(['id', 'ids']);
    expect(text).toBe(`SELECT $1::uuid, '12:00', 'it''s :not', "a:b", $$ :no $$, $t$ :no $t$, x[1:2] -- :no
      /* :no */ FROM t WHERE k = ANY($2::text[])`);
  });

  it('refuses a text with positional parameters too', () => {
    expect(() => compileNamedParameters('SELECT :a, $1')).toThrow(/positional/);
  });

  it('puts values in order, and refuses a missing or an unknown name', () => {
    expect(positionalValues('s', ['b', 'a'], { a: 1, b: 2 })).toEqual([2, 1]);
    expect(positionalValues('s', ['a'], { a: undefined })).toEqual([undefined]);
    expect(() => positionalValues('s', ['a', 'b'], { a: 1 })).toThrow(/no value for :b/);
    expect(() => positionalValues('s', ['a'], { a: 1, c: 2 })).toThrow(/no parameter of that name: c/);
  });
});

describe('namedStatement on PostgreSQL', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase(inject('pgAdminUrl'), inject('pgTemplate'));
    db = createDb(database.url, { poolMax: 1 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  const ECHO = namedStatement(
    `SELECT :word::text AS word, :n::int + :n::int AS twice, ':word' AS literal`,
    z.object({ word: z.string(), twice: z.number(), literal: z.string() }),
  );

  it('runs with its values by name, through queryRows and inTransaction', async () => {
    expect(await queryRows(db, ECHO, { word: 'hi', n: 2 })).toEqual([{ word: 'hi', twice: 4, literal: ':word' }]);
    expect(await inTransaction(db, (rows) => rows(ECHO, { n: 5, word: 'yo' }))).toEqual([{ word: 'yo', twice: 10, literal: ':word' }]);
  });

  it('gives the values in $n order for the text sent another way (orderedValues)', () => {
    expect(orderedValues(ECHO, { n: 3, word: 'w' })).toEqual(['w', 3]);
    expect(() => orderedValues(ECHO, { word: 'w' })).toThrow(/no value for :n/);
    expect(orderedValues(statement('SELECT $1::int AS one', z.object({ one: z.number() })), [1])).toEqual([1]);
  });

  it('refuses values in the wrong form, before anything is sent', async () => {
    await expect(queryRows(db, ECHO, ['hi', 2])).rejects.toThrow(/given by name/);
    await expect(queryRows(db, statement('SELECT 1 AS one WHERE $1::int = 1', z.object({ one: z.number() })), { a: 1 })).rejects.toThrow(/a list/);
  });
});
