// @switchyard/client: a typed tRPC client for every Switchyard procedure. It depends on the server
// for types only (`import type`, and a self-contained copy of the router type in the built
// package), so installing it pulls in neither the server, Prisma nor express. The container file id
// and the sample video URL are @switchyard/schema's definitions, which the build copies into the
// package, and so it does with @switchyard/rules, the routing decision's rules, carried (in
// dist/rules/) for a decider in the routing service's own process (scripts/inline-packages.mjs).
import { createTRPCClient, httpBatchLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { containerFileId } from '@switchyard/schema/file-ids';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema/samples';
import { errorLink, switchyardError, SwitchyardError } from './errors.js';
import type { AppRouter } from './router.js';

export type { AppRouter };
export { SwitchyardError };
/** A container file's id: "cfile_" + base64url of its path inside the sandbox. */
export { containerFileId };
/** A video job output's upstream_url that the server serves from its own sample video (the demo's). */
export { SAMPLE_VIDEO_URL };
export {
  createGenerationRecorder,
  GenerationRecorder,
  MAX_RECORD_BATCH_SIZE,
  type GenerationRecorderOptions,
  type RecordedGeneration,
  type RecordGenerationInput,
} from './recorder.js';
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

/**
 * A client for a browser signed in with a session (docs/sessions.md): no key, the session cookie
 * that the browser sends by itself, and the session's CSRF token, which every mutation carries in
 * the X-CSRF-Token header.
 */
export interface SwitchyardSessionClientOptions {
  /** The server's base URL; in a page served by the server, its own origin (location.origin). */
  url: string;
  session: {
    /** The session's csrf_token (from POST /session/sign-in, or sessions.current after a reload). */
    csrfToken?: string;
    /** Whether fetch sends the cookie: same-origin (the default) or include. */
    credentials?: 'same-origin' | 'include';
  };
  /** Custom fetch; outside a browser, one that adds the session's Cookie header. */
  fetch?: typeof globalThis.fetch;
}

/** The most calls the server takes in one batch request. */
export const MAX_BATCH_SIZE = 100;

/** The header that carries a session's CSRF token (@switchyard/schema's CSRF_HEADER; a test keeps them equal). */
export const CSRF_HEADER = 'x-csrf-token';

export function createSwitchyardClient(options: SwitchyardClientOptions | SwitchyardSessionClientOptions): SwitchyardClient {
  const base = options.url.replace(/\/+$/, '');
  let headers: Record<string, string>;
  let fetchFn = options.fetch;
  if ('session' in options) {
    const { csrfToken, credentials = 'same-origin' } = options.session;
    headers = csrfToken ? { [CSRF_HEADER]: csrfToken } : {};
    const inner = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    fetchFn = (input, init) => inner(input, { ...init, credentials });
  } else {
    headers = { authorization: `Bearer ${options.apiKey}` };
  }
  return createTRPCClient<AppRouter>({
    links: [
      errorLink,
      httpBatchLink({
        url: `${base}/trpc`,
        // The server refuses batches of more than 100 calls (whole, before any runs); larger bursts
        // go as several requests.
        maxItems: MAX_BATCH_SIZE,
        headers,
        ...(fetchFn ? { fetch: fetchFn } : {}),
      }),
    ],
  });
}

/** What the sandbox runner's upload route answers (the server's ContainerFile; a test keeps them equal). */
export interface ContainerFile {
  container_id: string;
  file_id: string;
  /** Clean relative path inside the sandbox. */
  path: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  /** ISO 8601 timestamps. */
  created_at: string;
  updated_at: string;
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
  const body = (await res.json().catch(() => null)) as {
    data?: ContainerFile;
    error?: { code: number; message: string; metadata?: Record<string, unknown> };
  } | null;
  if (res.ok && body?.data) return body.data;
  throw switchyardError(res.status, body?.error?.message ?? res.statusText, body?.error?.metadata);
}
