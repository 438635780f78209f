// One guarded outbound request with a small answer (a webhook delivery, a JWKS document): the URL's
// addresses are checked and pinned (connect.ts), redirects are not followed (a 3xx is returned as
// it is: a receiver cannot send the request elsewhere), the whole exchange has a deadline, and the
// answer's body is read up to a bound, never more.
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { Upstream } from '../lib/errors.js';
import { canonicalAddress } from './policy.js';
import { guardedAddresses, pinnedLookup, RefusedUpstream, type UpstreamPolicy } from './connect.js';

export interface UpstreamFetchInit {
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole exchange, connection to the last byte read (default 10 s). */
  timeoutMs?: number;
  /** The most of the answer's body that is read; the rest is dropped and `truncated` set (default 1 MiB). */
  maxBodyBytes?: number;
  signal?: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body was longer than maxBodyBytes. */
  truncated: boolean;
}

/**
 * Sends one request to `url` under `policy`. Resolves with any HTTP answer (2xx or not); rejects
 * with RefusedUpstream when the policy refuses the address (nothing is connected), and with
 * Upstream on a network failure or the deadline.
 */
export async function upstreamFetch(policy: UpstreamPolicy, url: string | URL, init: UpstreamFetchInit = {}): Promise<UpstreamResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const addresses = await guardedAddresses(target, policy);
  const pinned = new Set(addresses.map((a) => canonicalAddress(a.address)));
  const timeoutMs = init.timeoutMs ?? 10_000;
  const maxBodyBytes = init.maxBodyBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(init.body)) }),
        ...init.headers,
      },
      signal: init.signal,
      lookup: pinnedLookup(addresses),
      // A socket of its own: never one a pool opened for a differently resolved host.
      agent: false,
    });
    const deadline = setTimeout(() => req.destroy(new Upstream(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('socket', (socket) => {
      const connected = () => {
        if (!socket.remoteAddress || !pinned.has(canonicalAddress(socket.remoteAddress))) {
          req.destroy(new RefusedUpstream(`connected to ${socket.remoteAddress}, not a checked address`));
        }
      };
      if (socket.connecting) socket.once('connect', connected);
      else connected();
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (chunk: Buffer) => {
        if (truncated) return;
        if (size + chunk.length > maxBodyBytes) {
          chunks.push(chunk.subarray(0, maxBodyBytes - size));
          size = maxBodyBytes;
          truncated = true;
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
          req.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.once('end', () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
      });
      res.once('error', (error) => {
        clearTimeout(deadline);
        reject(error instanceof Upstream ? error : new Upstream(`upstream answer failed: ${error.message}`));
      });
    });
    req.on('error', (error) => {
      clearTimeout(deadline);
      reject(error instanceof Upstream ? error : new Upstream(`upstream request failed: ${(error as NodeJS.ErrnoException).code ?? error.message}`));
    });
    req.end(init.body);
  });
}
