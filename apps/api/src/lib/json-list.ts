// "null or a list" columns are Json (Prisma lists cannot be null): SQL NULL means null.
import { Prisma } from '@switchyard/db';

export function listOrNull(value: Prisma.JsonValue | null): string[] | null {
  return Array.isArray(value) ? value.map(String) : null;
}

/** For a write: undefined leaves the column alone, null stores SQL NULL, a list stores JSON. */
export function jsonList(value: string[] | null | undefined) {
  if (value === undefined) return undefined;
  return value === null ? Prisma.DbNull : value;
}
