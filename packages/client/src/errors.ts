// What every failed call of the client rejects with, and the link that makes tRPC's errors into it.
import { TRPCClientError, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import type { AppRouter } from './router.js';

interface ErrorData {
  httpStatus?: number;
  metadata?: Record<string, unknown>;
}

/**
 * What every failed call rejects with: the HTTP status and the spec's message (and, for some 400s,
 * metadata naming what was wrong). It is a TRPCClientError, so tRPC's own checks keep working.
 * `status` is 0 when no answer came (connection refused).
 */
export class SwitchyardError extends TRPCClientError<AppRouter> {
  override readonly name = 'SwitchyardError';
  readonly status: number;
  readonly metadata: Record<string, unknown> | undefined;

  constructor(error: TRPCClientError<AppRouter>) {
    super(error.message, { cause: error, result: error.shape ? { error: error.shape } : undefined, meta: error.meta });
    // TRPCClientError pins its own prototype in its constructor; restore the subclass's.
    Object.setPrototypeOf(this, new.target.prototype);
    const data = (error.data ?? {}) as ErrorData;
    this.status = data.httpStatus ?? 0;
    this.metadata = data.metadata;
  }
}

export const errorLink: TRPCLink<AppRouter> =
  () =>
  ({ next, op }) =>
    observable((observer) =>
      next(op).subscribe({
        next: (value) => observer.next(value),
        error: (error) => observer.error(error instanceof SwitchyardError ? error : new SwitchyardError(error)),
        complete: () => observer.complete(),
      }),
    );

/**
 * A SwitchyardError for an answer that did not come through tRPC's own links (a raw route's, or one
 * item of generations.recordBatch): the same status, message and metadata a procedure's would carry.
 */
export function switchyardError(status: number, message: string, metadata?: Record<string, unknown>): SwitchyardError {
  return new SwitchyardError(
    new TRPCClientError(message, {
      // The shape the server's error formatter gives tRPC errors; the status is any the server answers.
      result: {
        error: { code: -32600, message, data: { httpStatus: status, metadata } } as NonNullable<TRPCClientError<AppRouter>['shape']>,
      },
    }),
  );
}
