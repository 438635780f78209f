// @switchyard/client: a typed tRPC client for every Switchyard procedure. It depends on the server
// for types only (`import type`), so installing it pulls in neither the server, Prisma nor express.
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCClient, type TRPCLink } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { AppRouter } from '@switchyard/api';
import type { ContainerFile } from '@switchyard/schema';

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

/** The most calls the server takes in one batch request. */
export const MAX_BATCH_SIZE = 100;

export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  const base = options.url.replace(/\/+$/, '');
  return createTRPCClient<AppRouter>({
    links: [
      errorLink,
      httpBatchLink({
        url: `${base}/trpc`,
        // The server refuses batches of more than 100 calls (whole, before any runs); larger bursts
        // go as several requests.
        maxItems: MAX_BATCH_SIZE,
        headers: { authorization: `Bearer ${options.apiKey}` },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}

/** A container file's id: "cfile_" + base64url of its path inside the sandbox. */
export function containerFileId(path: string): string {
  return `cfile_${Buffer.from(path, 'utf8').toString('base64url')}`;
}

export interface WriteContainerFileInput {
  /** The organization the container belongs to (container ids are unique within one). */
  organization_id: string;
  container_id: string;
  /** Clean relative path inside the sandbox, e.g. "out/report.md". */
  path: string;
  body: string | Uint8Array;
  /** Media type stored with the file (default application/octet-stream). */
  content_type?: string;
}

/**
 * The sandbox runner's way to write (or replace) a container file:
 * PUT /internal/containers/{id}/files/{file_id}?organization_id= with the raw bytes, platform key
 * required. Not a tRPC procedure (bytes are streamed, not JSON), hence this helper; it fails with
 * the same SwitchyardError as the procedures do.
 */
export async function writeContainerFile(options: SwitchyardClientOptions, input: WriteContainerFileInput): Promise<ContainerFile> {
  const base = options.url.replace(/\/+$/, '');
  const url =
    `${base}/internal/containers/${encodeURIComponent(input.container_id)}/files/${containerFileId(input.path)}` +
    `?organization_id=${encodeURIComponent(input.organization_id)}`;
  const doFetch = options.fetch ?? globalThis.fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': input.content_type ?? 'application/octet-stream' },
      body: input.body,
    });
  } catch (cause) {
    throw new SwitchyardError(new TRPCClientError((cause as Error).message, { cause: cause as Error }));
  }
  const body = (await res.json().catch(() => null)) as
    | { data?: ContainerFile; error?: { code: number; message: string; metadata?: Record<string, unknown> } }
    | null;
  if (res.ok && body?.data) return body.data;
  const message = body?.error?.message ?? res.statusText;
  throw new SwitchyardError(
    new TRPCClientError(message, {
      // The shape the server's error formatter gives tRPC errors; the status is any the route answers.
      result: {
        error: { code: -32600, message, data: { httpStatus: res.status, metadata: body?.error?.metadata } } as NonNullable<
          TRPCClientError<AppRouter>['shape']
        >,
      },
    }),
  );
}
