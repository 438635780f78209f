import { Prisma } from '@switchyard/db';

/** A unique constraint refused the write (PostgreSQL 23505, Prisma P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/**
 * Runs a write; when a unique constraint refuses it, throws what `refusal` makes instead (a domain
 * error such as Invalid, "slug taken"). A `refusal` that makes nothing lets the violation through,
 * as does every other error.
 */
export async function refuseDuplicates<T>(write: () => Promise<T>, refusal: () => Error | undefined): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const refused = isUniqueViolation(error) ? refusal() : undefined;
    throw refused ?? error;
  }
}

/**
 * SQLSTATEs with which PostgreSQL refuses a value it was sent, not our SQL: text it cannot store or
 * read as the column's type, numbers and dates out of range, a value too long for its column or
 * index. Schemas refuse such input before any query; these are the safety net behind them.
 */
const CALLER_VALUE_STATES = new Set([
  '22001', // string_data_right_truncation
  '22003', // numeric_value_out_of_range
  '22007', // invalid_datetime_format
  '22008', // datetime_field_overflow
  '22021', // character_not_in_repertoire (NUL)
  '22025', // invalid_escape_sequence
  '22P02', // invalid_text_representation (e.g. not a uuid)
  '22P05', // untranslatable_character (\u0000 in jsonb)
  '54000', // program_limit_exceeded (e.g. an index row too large)
]);

/** Prisma's own refusals of a value: too long for its column (P2000), past 64 bits (P2033). */
const CALLER_VALUE_PRISMA_CODES = new Set(['P2000', 'P2033']);

function sqlStateOf(error: unknown): string | undefined {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    const cause = (error.meta?.driverAdapterError as { cause?: { originalCode?: unknown } } | undefined)?.cause;
    return typeof cause?.originalCode === 'string' ? cause.originalCode : undefined;
  }
  // node-postgres (queryRows): its DatabaseError carries the SQLSTATE as `code`, beside `severity`.
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return error instanceof Error && typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The database refused a value the caller sent (a 400, never a 500). */
export function isCallerValueRefused(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError && CALLER_VALUE_PRISMA_CODES.has(error.code)) return true;
  const state = sqlStateOf(error);
  return state !== undefined && CALLER_VALUE_STATES.has(state);
}

/** Socket errors of a connection that could not be made or was cut. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or not there yet: 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, recovering), and class 08 (connection exception).
 */
const CONNECTION_STATES = /^(08...|57P0[123])$/;

/** Prisma's codes for a database it cannot reach (P1001), that timed out (P1002), or that closed the connection (P1017). */
const CONNECTION_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017']);

/** The driver adapter's kinds for the same (@prisma/adapter-pg's convertDriverError). */
const CONNECTION_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);

/** node-postgres's own messages for a connection it lost (it gives them no code). */
const CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|terminating connection due to administrator command)/;

/**
 * The database is not there: the connection could not be made, or it was cut (the server died,
 * shut down, or is starting up). Reads node-postgres errors, Prisma's and the driver adapter's
 * wrappings of them, and their causes. Such a failure is the database's, not the request's (503).
 */
export function isConnectionLost(error: unknown, depth = 0): boolean {
  if (depth > 5 || error === null || typeof error !== 'object') return false;
  const e = error as { code?: unknown; kind?: unknown; message?: unknown; originalCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
  if (typeof e.code === 'string' && (CONNECTION_ERROR_CODES.has(e.code) || CONNECTION_PRISMA_CODES.has(e.code) || CONNECTION_STATES.test(e.code))) {
    return true;
  }
  if (typeof e.originalCode === 'string' && CONNECTION_STATES.test(e.originalCode)) return true;
  if (typeof e.kind === 'string' && CONNECTION_ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isConnectionLost(inner, depth + 1))) return true;
  return isConnectionLost(e.meta?.driverAdapterError, depth + 1) || isConnectionLost(e.cause, depth + 1);
}
