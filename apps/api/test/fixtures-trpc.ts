// The tests' tRPC client: raw HTTP calls to the real server (so tests see statuses and error
// bodies), typed by the app router. A procedure path must name a real procedure (a typo fails
// tsc), its input is that procedure's input and its result that procedure's output, as JSON
// carries it (dates as strings). trpcRaw() is the untyped variant, for tests whose point is a
// malformed or generic input.
import { CSRF_HEADER } from '@switchyard/schema';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { expect } from 'vitest';
import type { AppRouter } from '../src/router.js';
import { defaultKeyFor } from './fixtures.js';

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;

/** Every procedure of the app router, as `namespace.procedure`. */
export type ProcedurePath = { [N in keyof Outputs & string]: `${N}.${keyof Outputs[N] & string}` }[keyof Outputs & string];
export type InputOf<P extends ProcedurePath> = P extends `${infer N extends keyof Inputs & string}.${infer M}`
  ? M extends keyof Inputs[N]
    ? Inputs[N][M]
    : never
  : never;
export type OutputOf<P extends ProcedurePath> = P extends `${infer N extends keyof Outputs & string}.${infer M}`
  ? M extends keyof Outputs[N]
    ? Outputs[N][M]
    : never
  : never;

/** The error of a failed call, as the server's tRPC error formatter shapes it. */
export interface TrpcError {
  message: string;
  data: { httpStatus: number; metadata?: Record<string, unknown> };
}

/** A call's status with its result data (undefined when it failed) or its error. */
export interface TrpcResult<T> {
  status: number;
  data: T;
  error: TrpcError | undefined;
}

/** Anything that sends a request to a server with a key: a TestServer, or a replica process. */
export interface Requester {
  request(pathname: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

export interface CallOptions {
  /** The caller's key (null: none). Default: the platform key for platform procedures, else the management key. */
  key?: string | null;
  /** A GET (a tRPC query) instead of a POST. */
  query?: boolean;
}

/** Calls any path under /trpc with any input: for tests whose point is a bad or generic input. */
export async function trpcRaw(
  server: Requester & { platformKey: string; managementKey: string },
  path: string,
  input: unknown,
  options: CallOptions = {},
): Promise<TrpcResult<unknown>> {
  const key = options.key === undefined ? defaultKeyFor(server, path) : options.key;
  const res = options.query
    ? await server.request(`/trpc/${path}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { key })
    : await server.request(`/trpc/${path}`, {
        key,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
  const body = (await res.json()) as { result?: { data: unknown }; error?: TrpcError };
  return { status: res.status, data: body.result?.data, error: body.error };
}

/** Calls a procedure of the app router with its input; answers the status and its output (or the error). */
export async function trpc<P extends ProcedurePath>(
  server: Requester & { platformKey: string; managementKey: string },
  path: P,
  input: InputOf<P>,
  options: CallOptions = {},
): Promise<TrpcResult<OutputOf<P>>> {
  return (await trpcRaw(server, path, input, options)) as TrpcResult<OutputOf<P>>;
}

/** Like trpc(), but the call must succeed (200, no error); answers its output. */
export async function ok<P extends ProcedurePath>(
  server: Requester & { platformKey: string; managementKey: string },
  path: P,
  input: InputOf<P>,
  options: CallOptions = {},
): Promise<OutputOf<P>> {
  const result = await trpc(server, path, input, options);
  expect(result.error, `${path}: ${JSON.stringify(result.error)}`).toBeUndefined();
  expect(result.status).toBe(200);
  return result.data;
}

/** A tRPC call's status, data and error, as a session's call answers it. */
export interface SessionCalled {
  status: number;
  data: unknown;
  error: TrpcError | undefined;
}

/**
 * A tRPC call made with a session cookie (no key) through `via`, with the CSRF header when `as.csrf`
 * is given: a query (GET, input in the URL) or a mutation (POST).
 */
export async function sessionCall(
  via: Requester,
  path: string,
  input: unknown,
  as: { cookie: string; csrf?: string | null },
  query = false,
): Promise<SessionCalled> {
  const headers: Record<string, string> = { cookie: as.cookie };
  if (as.csrf) headers[CSRF_HEADER] = as.csrf;
  const res = query
    ? await via.request(`/trpc/${path}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { key: null, headers })
    : await via.request(`/trpc/${path}`, {
        key: null,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
  const body = (await res.json()) as { result?: { data: unknown }; error?: TrpcError };
  return { status: res.status, data: body.result?.data, error: body.error };
}

/**
 * A subscription's answer (server-sent events, as tRPC's httpSubscriptionLink reads them): its
 * first event after the stream's own "connected" is either the refusal (event "serialized-error",
 * its status in the error's data) or the subscription's first data, an admitted call.
 */
export async function trpcSubscriptionRaw(server: Requester, path: string, input: unknown, key: string | null): Promise<TrpcResult<undefined>> {
  const controller = new AbortController();
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await server.request(`/trpc/${path}${query}`, { key, signal: controller.signal });
  if (!res.body || !res.headers.get('content-type')?.includes('text/event-stream')) {
    const body = (await res.json()) as { error?: TrpcError };
    return { status: res.status, data: undefined, error: body.error };
  }
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const chunk of res.body) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      for (const block of text.split('\n\n').slice(0, -1)) {
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === 'connected' || event === 'ping' || data === undefined) continue;
        if (event === 'serialized-error') {
          const error = JSON.parse(data) as TrpcError;
          return { status: error.data.httpStatus, data: undefined, error };
        }
        return { status: 200, data: undefined, error: undefined };
      }
    }
    return { status: 0, data: undefined, error: undefined };
  } finally {
    controller.abort();
  }
}
