// @switchyard/client: a typed tRPC client for every Switchyard procedure. It depends on the server
// for types only (`import type`), so installing it pulls in neither the server, Prisma nor express.
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCClient, type TRPCLink } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { AppRouter } from '@switchyard/api';

export type { AppRouter };
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type SwitchyardClient = TRPCClient<AppRouter>;

export interface SwitchyardClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8080 (the client calls <url>/trpc). */
  url: string;
  apiKey: string;
  /** Custom fetch, e.g. for proxies. */
  fetch?: typeof globalThis.fetch;
}

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

const errorLink: TRPCLink<AppRouter> = () => ({ next, op }) =>
  observable((observer) =>
    next(op).subscribe({
      next: (value) => observer.next(value),
      error: (error) => observer.error(error instanceof SwitchyardError ? error : new SwitchyardError(error)),
      complete: () => observer.complete(),
    }),
  );

export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  const base = options.url.replace(/\/+$/, '');
  return createTRPCClient<AppRouter>({
    links: [
      errorLink,
      httpBatchLink({
        url: `${base}/trpc`,
        headers: { authorization: `Bearer ${options.apiKey}` },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}
