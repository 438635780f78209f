// Rows of raw SQL, typed at the boundary: every statement that answers rows declares a zod schema of
// one row, and its rows are parsed with it (queryRows for node-postgres, rawRows for Prisma's raw
// queries). A column the SQL renames, drops or adds, or a value the schema does not allow (an enum
// label it does not know), fails the statement loudly in the tests that run it, never a silent
// `undefined` in an answer. Schemas of a whole table's row (`SELECT g.*`) are checked against
// Prisma's model type by tsc (modelColumns).
import { z } from 'zod';
import type { OrgRole, Prisma } from './generated/prisma/client.js';

/**
 * The schema of one row: `z.object` of its columns, a union of objects with the same columns
 * (rowOrNulls), or either piped into a transform.
 */
export type RowSchema = z.ZodType<object>;

/** A statement answered columns or values its row schema does not describe: a bug in the code, a 500. */
export class RowMismatch extends Error {
  constructor(
    readonly statement: string,
    detail: string,
  ) {
    super(`a statement's rows disagree with its row schema: ${detail}\n  in: ${statement.trim().replace(/\s+/g, ' ').slice(0, 200)}`);
    this.name = 'RowMismatch';
  }
}

/** The sorted column names a row schema describes; throws (at declaration) for a schema that is no row. */
export function columnsOf(schema: z.ZodType): string[] {
  const def = schema._zod.def as z.core.$ZodTypeDef & { shape?: z.ZodRawShape; options?: z.ZodType[]; in?: z.ZodType };
  switch (def.type) {
    case 'object':
      return Object.keys(def.shape!).sort();
    case 'pipe':
      return columnsOf(def.in!);
    case 'union': {
      const [first, ...rest] = def.options!.map(columnsOf);
      if (rest.some((columns) => columns.join() !== first!.join())) throw new Error('the options of a row schema must name the same columns');
      return first!;
    }
    default:
      throw new Error(`a row schema is an object of columns, not ${def.type}`);
  }
}

/** RowMismatch unless the statement answered exactly the columns its row schema names (`names` in any order). */
export function assertColumns(statement: string, names: readonly string[], columns: readonly string[]): void {
  const sorted = [...names].sort();
  if (sorted.length !== columns.length || sorted.some((name, i) => name !== columns[i])) {
    throw new RowMismatch(
      statement,
      `the statement answers the columns ${sorted.join(', ') || '(none)'}; its row schema names ${columns.join(', ') || '(none)'}`,
    );
  }
}

/** Each row parsed with the schema (its output: transforms applied); RowMismatch naming the first bad one. */
export function parseRows<Row extends RowSchema>(schema: Row, rows: readonly unknown[], statement: string): z.output<Row>[] {
  const parsed = new Array<z.output<Row>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const result = schema.safeParse(rows[i]);
    if (!result.success) throw new RowMismatch(statement, `row ${i}: ${z.prettifyError(result.error).replace(/\n/g, ' ')}`);
    parsed[i] = result.data;
  }
  return parsed;
}

/**
 * Rows of a LEFT JOIN that may find nothing (e.g. a page past the end, which still carries a
 * total): the `always` columns, with either all of the `joined` ones or every one of them null.
 * Its output is the union of the two, so `row.id === null` narrows it.
 */
export function rowOrNulls<Always extends z.ZodRawShape, Joined extends z.ZodRawShape>(always: Always, joined: Joined) {
  const nulls = Object.fromEntries(Object.keys(joined).map((column) => [column, z.null()])) as { [K in keyof Joined]: z.ZodNull };
  return z.union([z.object({ ...always, ...joined }), z.object({ ...always, ...nulls })]);
}

/**
 * A json or jsonb column. node-postgres has parsed it (and Prisma too), so it is JSON by
 * construction: only its presence is checked. z.json() would walk the whole value again, and cost
 * many times the rest of a row of GET /guardrails (`pnpm --filter @switchyard/db run bench`); code that
 * reads into a value checks its shape there (e.g. listOrNull).
 */
export const parsedJson = z.custom<Prisma.JsonValue>((value) => value !== undefined);

/**
 * A numeric column as node-postgres reads it (text), finite: PostgreSQL's numeric also holds `NaN`
 * and `Infinity`, which `Number()` would turn into a JSON `null`. For answers that are not parsed
 * again by their output schema (meta.answer in the API), where such a value must fail the statement instead.
 */
export const decimalText = z.string().regex(/^-?\d+(\.\d+)?$/, 'a finite numeric');

/** How node-postgres reads a column that Prisma types as T: numeric and int8 as text, the rest as Prisma does. */
type PgRead<T> = T extends Prisma.Decimal | bigint ? string : T;

/**
 * The column schemas of a whole row of a Prisma model (for `SELECT t.*`), as node-postgres reads
 * them: `modelColumns<Guardrail>()({ id: z.string(), ... })`. tsc fails when a column is missing,
 * extra, or typed otherwise than the model (so a migration that renames or retypes a column, with
 * its schema.prisma change, is caught here); the tests that run the statement check the SQL side.
 */
export function modelColumns<Model>() {
  return <Shape extends { [K in keyof Model]-?: z.ZodType<PgRead<Model[K]>> }>(shape: Shape & Record<Exclude<keyof Shape, keyof Model>, never>): Shape => shape;
}

/**
 * org_role's labels by Prisma's OrgRole (schema.prisma maps `admin` to `org:admin`). Raw SQL reads
 * the labels; orgRoleColumn turns them into Prisma's values, so code sees one representation.
 */
export const ORG_ROLE_LABELS = { admin: 'org:admin', member: 'org:member' } as const satisfies Record<OrgRole, string>;
type OrgRoleLabel = (typeof ORG_ROLE_LABELS)[OrgRole];
const ROLE_OF_LABEL = Object.fromEntries(Object.entries(ORG_ROLE_LABELS).map(([role, label]) => [label, role])) as Record<OrgRoleLabel, OrgRole>;

/** An org_role column (its label, e.g. `org:admin`), read as Prisma's OrgRole (`admin`). */
export const orgRoleColumn = z.enum(Object.values(ORG_ROLE_LABELS) as [OrgRoleLabel, ...OrgRoleLabel[]]).transform((label): OrgRole => ROLE_OF_LABEL[label]);

/** A client for Prisma's raw queries: the Prisma client, or a transaction's. */
type RawClient = Pick<Prisma.TransactionClient, '$queryRaw' | '$queryRawUnsafe'>;

/**
 * Prisma's `$queryRaw` (a `Prisma.sql` template) or `$queryRawUnsafe` (`{ text, values }`) with
 * each row parsed by `row`, as queryRows does. Prisma reads values its own way: numeric as
 * Prisma.Decimal, int8 as bigint, timestamptz as Date, json parsed, enums as their labels. Inside a
 * transaction when `client` is one. Prisma gives no column names for an empty answer: they are
 * checked on the first row.
 */
export async function rawRows<Row extends RowSchema>(
  client: RawClient,
  row: Row,
  query: Prisma.Sql | { text: string; values: readonly unknown[] },
): Promise<z.output<Row>[]> {
  const template = 'strings' in query;
  const text = query.text;
  const rows = template ? await client.$queryRaw<unknown[]>(query) : await client.$queryRawUnsafe<unknown[]>(query.text, ...query.values);
  const first = rows[0];
  if (typeof first === 'object' && first !== null) assertColumns(text, Object.keys(first), columnsOf(row));
  return parseRows(row, rows, text);
}
