// Domain errors, thrown by services, and the one mapping from any error to the HTTP status and the
// spec's error envelope. REST, tRPC and the plain express routes all answer through httpErrorOf().
import { TRPCError } from '@trpc/server';
import type { Logger } from 'pino';
import { declaredStatus, ERROR_MESSAGES, type ErrorEnvelope, type ErrorStatus, type Statuses } from '@switchyard/schema';
import { isCallerValueRefused, isConnectionLost } from './db-errors.js';

export class DomainError extends Error {
  constructor(
    readonly status: ErrorStatus,
    /** Internal detail for logs; the client sees the spec's text for the status. */
    detail?: string,
    /** Safe, structured detail for the client (error.metadata). */
    readonly metadata?: Record<string, unknown>,
    /** Replaces the spec's text where the spec says the message carries more (402). */
    readonly publicMessage?: string,
  ) {
    super(detail ?? ERROR_MESSAGES[status]);
    this.name = new.target.name;
  }
}

export class Invalid extends DomainError {
  constructor(detail: string, metadata?: Record<string, unknown>) {
    super(400, detail, metadata ?? { reason: detail });
  }
}
/**
 * 401. The message is the spec's; `reason` (error.metadata.reason) says which: a missing key, an
 * unknown one, or the state of the caller's own key or organization. Only what the bearer's own
 * secret already names, never anything about another organization.
 */
export class Unauthorized extends DomainError {
  constructor(reason = 'missing or invalid API key') {
    super(401, reason, { reason });
  }
}
export class InsufficientCredits extends DomainError {
  constructor(addCreditsUrl: string) {
    super(402, 'credit balance is negative', undefined, `${ERROR_MESSAGES[402]}. Add more using ${addCreditsUrl}`);
  }
}
export class Forbidden extends DomainError {
  constructor(detail = 'management key required', publicMessage?: string, metadata?: Record<string, unknown>) {
    super(403, detail, metadata, publicMessage);
  }
}
export class NotFound extends DomainError {
  constructor(detail = 'not found') {
    super(404, detail);
  }
}
/** The request contradicts what is stored (admin-api.md section 6). */
export class Conflict extends DomainError {
  constructor(detail: string, metadata?: Record<string, unknown>) {
    super(409, detail, metadata ?? { reason: detail });
  }
}
export class PayloadTooLarge extends DomainError {
  constructor(detail: string) {
    super(413, detail);
  }
}
export class Upstream extends DomainError {
  constructor(detail: string, status: 502 | 524 | 529 = 502) {
    super(status, detail);
  }
}
/** A query ran past the server's time limit for it (POST /analytics/query: 408). */
export class Timeout extends DomainError {
  constructor(detail: string) {
    super(408, detail);
  }
}
/** A rate limit was reached (docs/rate-limits.md): 429, with Retry-After. */
export class TooManyRequests extends DomainError {
  constructor(
    detail: string,
    /** Seconds until the limit's window ends (the Retry-After header). */
    readonly retryAfterS: number,
    metadata: Record<string, unknown>,
  ) {
    super(429, detail, metadata);
  }
}
export class Unavailable extends DomainError {
  constructor(
    detail: string,
    /** Seconds until trying again may help (the Retry-After header); none when unknown. */
    readonly retryAfterS?: number,
    metadata?: Record<string, unknown>,
  ) {
    super(503, detail, metadata);
  }
}

/** error.metadata.reason of the 503 answered while the database is unreachable. */
export const DATABASE_UNAVAILABLE = 'the database is unavailable; try again shortly';

export interface HttpError {
  status: ErrorStatus;
  message: string;
  metadata?: Record<string, unknown>;
  /** A 429's or 503's Retry-After header, in seconds. */
  retryAfterS?: number;
  /** The error behind a 500 (or a database refusal of a caller's value), to be logged. */
  cause?: unknown;
}

const TRPC_CODE_STATUS: Partial<Record<TRPCError['code'], ErrorStatus>> = {
  PARSE_ERROR: 400,
  BAD_REQUEST: 400,
  UNSUPPORTED_MEDIA_TYPE: 400,
  UNPROCESSABLE_CONTENT: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
};

const STATUS_TRPC_CODE: Partial<Record<ErrorStatus, TRPCError['code']>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'TOO_MANY_REQUESTS',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  524: 'TIMEOUT',
  529: 'BAD_GATEWAY',
};

/** The tRPC error code closest to a status, for tRPC clients that switch on it. */
export function trpcCodeOf(status: ErrorStatus): TRPCError['code'] {
  return STATUS_TRPC_CODE[status] ?? 'INTERNAL_SERVER_ERROR';
}

interface ValidationIssue {
  path: PropertyKey[];
  message: string;
}

function isValidationError(error: unknown): error is { issues: ValidationIssue[] } {
  return error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError') && Array.isArray((error as { issues?: unknown }).issues);
}

function fromDomain(error: DomainError): HttpError {
  return {
    status: error.status,
    message: error.publicMessage ?? ERROR_MESSAGES[error.status],
    ...(error.metadata ? { metadata: error.metadata } : {}),
    ...((error instanceof TooManyRequests || error instanceof Unavailable) && error.retryAfterS !== undefined ? { retryAfterS: error.retryAfterS } : {}),
    ...(error.status === 500 ? { cause: error } : {}),
  };
}

/** A schema refused the input: 400 naming the fields. */
function fromValidation(error: { issues: ValidationIssue[] }): HttpError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  return { status: 400, message: ERROR_MESSAGES[400], metadata: { issues } };
}

export function httpErrorOf(error: unknown): HttpError {
  if (error instanceof DomainError) return fromDomain(error);
  if (isValidationError(error)) return fromValidation(error);
  if (error instanceof TRPCError) {
    if (error.cause instanceof DomainError) return fromDomain(error.cause);
    if (error.code === 'BAD_REQUEST' && isValidationError(error.cause)) return fromValidation(error.cause);
    const status = TRPC_CODE_STATUS[error.code];
    if (status) return { status, message: ERROR_MESSAGES[status] };
    return fromUnknown(error.cause ?? error);
  }
  return fromUnknown(error);
}

/**
 * Anything else is ours (500), unless the database refused a value the caller sent (400), or is not
 * there (503, not logged per request: the database's health, health/database-health.ts, logs the
 * loss once).
 */
function fromUnknown(error: unknown): HttpError {
  if (isConnectionLost(error)) return { status: 503, message: ERROR_MESSAGES[503], metadata: { reason: DATABASE_UNAVAILABLE } };
  if (isCallerValueRefused(error)) {
    return { status: 400, message: ERROR_MESSAGES[400], metadata: { reason: 'a value the database cannot store' }, cause: error };
  }
  return { status: 500, message: ERROR_MESSAGES[500], cause: error };
}

/**
 * The error as an operation that declares `statuses` answers it: its own status if declared, else
 * the declared substitute (@switchyard/schema: declaredStatus), with that status's message.
 */
export function declaredAnswer(statuses: Statuses, error: HttpError): HttpError {
  const status = declaredStatus(statuses, error.status);
  return status === error.status ? error : { ...error, status, message: ERROR_MESSAGES[status] };
}

/** The spec's error body; `requestId` (the request's X-Request-Id) goes into error.metadata.request_id. */
export function envelopeOf(error: HttpError, requestId?: string): ErrorEnvelope {
  const metadata = requestId === undefined ? error.metadata : { ...error.metadata, request_id: requestId };
  return {
    error: {
      code: error.status,
      message: error.message,
      ...(metadata ? { metadata } : {}),
    },
  };
}

/**
 * Logs the cause of an internal error; the client sees only the spec's text. A value the database
 * refused (a 400 with a cause) is logged as a warning: some schema let it through.
 */
export function logIfInternal(logger: Logger, error: HttpError, context: Record<string, unknown>): void {
  if (error.status === 500) logger.error({ err: error.cause, ...context }, 'internal error');
  else if (error.cause !== undefined) logger.warn({ err: error.cause, ...context }, 'the database refused a value the caller sent');
}
