// Fetching a video from its upstream provider: one GET (Range forwarded), a connect timeout, an
// idle timeout (no byte for that long, before or after the headers), a minimum rate, a few
// redirects followed, and the request aborted when the caller's signal fires (the client went
// away). The body is handed back as the live socket stream: nothing is buffered here.
//
// Every hop (the URL, then each redirect) is checked before anything connects: http(s) only, no
// credentials, and each address its host resolves to must pass refusalOf() unless the operator
// allowed the host (UPSTREAM_ALLOWED_HOSTS). The connection then goes to exactly the addresses that
// were checked (the socket's lookup answers with them), so a second DNS answer cannot move it
// elsewhere (DNS rebinding). A refusal happens before any connection, and answers like any other
// provider failure (502), so it tells nothing about what listens behind the address.
import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Invalid, Upstream } from '../../lib/errors.js';
import { canonicalAddress, guardedAddresses, pinnedLookup, RefusedUpstream, type ResolvedAddress, type UpstreamPolicy } from '../../upstream/index.js';

export { RefusedUpstream };

export interface UpstreamOptions extends UpstreamPolicy {
  range?: string;
  signal: AbortSignal;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Cut the provider off when it averages fewer bytes per second than this over rateWindowMs (0: never). */
  minBytesPerSecond: number;
  rateWindowMs: number;
  maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function openUpstream(url: string, options: UpstreamOptions): Promise<IncomingMessage> {
  let target = new URL(url);
  for (let redirects = options.maxRedirects ?? 3; ; redirects--) {
    const addresses = await guardedAddresses(target, options);
    const res = await requestOnce(target, addresses, options);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location) {
      res.resume();
      if (redirects === 0) throw new Upstream('too many redirects');
      try {
        target = new URL(location, target);
      } catch {
        throw new Upstream(`redirect to an invalid URL: ${location}`);
      }
      continue;
    }
    if (status === 200 || status === 206) return res;
    res.resume();
    // A Range the provider cannot satisfy is the client's bad parameter, not a provider failure.
    if (status === 416) throw new Invalid('range not satisfiable', { parameter: 'Range', reason: 'range not satisfiable' });
    throw new Upstream(`upstream answered ${status}`);
  }
}

function requestOnce(url: URL, addresses: ResolvedAddress[], options: UpstreamOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      reject(new Upstream('client went away before the upstream request'));
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'GET',
      headers: { accept: '*/*', ...(options.range ? { range: options.range } : {}) },
      signal: options.signal,
      lookup: pinnedLookup(addresses),
      // A socket of its own: never one a pool opened for an earlier, differently resolved hop.
      agent: false,
    });
    const pinned = new Set(addresses.map((a) => canonicalAddress(a.address)));
    let connectTimer: NodeJS.Timeout | undefined;
    req.on('socket', (socket) => {
      guardRate(req, socket, options);
      const connected = () => {
        clearTimeout(connectTimer);
        // Belt and braces: the peer is one of the checked addresses.
        if (!socket.remoteAddress || !pinned.has(canonicalAddress(socket.remoteAddress))) {
          req.destroy(new RefusedUpstream(`connected to ${socket.remoteAddress}, not a checked address`));
        }
      };
      if (!socket.connecting) return connected();
      connectTimer = setTimeout(() => req.destroy(new Upstream(`connect timeout after ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
      socket.once('connect', connected);
    });
    // Socket inactivity: waiting for the headers, and later between body chunks.
    req.setTimeout(options.idleTimeoutMs, () => req.destroy(new Upstream(`upstream idle for ${options.idleTimeoutMs} ms`)));
    req.once('response', (res) => {
      clearTimeout(connectTimer);
      resolve(res);
    });
    req.on('error', (error) => {
      clearTimeout(connectTimer);
      reject(error instanceof Upstream ? error : new Upstream(`upstream request failed: ${(error as NodeJS.ErrnoException).code ?? error.message}`));
    });
    req.end();
  });
}

/** Samples per rate window: the window slides in steps of a tenth. */
const RATE_STEPS = 10;

/**
 * Cuts the request off when the provider averages fewer than minBytesPerSecond over the last
 * rateWindowMs, headers included. Time when this side holds the provider back (the socket paused
 * because the client is not reading) does not count: the window only covers time spent waiting
 * on the provider.
 */
function guardRate(req: ClientRequest, socket: Socket, options: UpstreamOptions): void {
  if (options.minBytesPerSecond === 0) return;
  const needed = (options.minBytesPerSecond * options.rateWindowMs) / 1000;
  const steps: number[] = [];
  let last = socket.bytesRead;
  let sum = 0;
  const timer = setInterval(() => {
    if (socket.isPaused()) return;
    const read = socket.bytesRead;
    steps.push(read - last);
    sum += read - last;
    last = read;
    if (steps.length > RATE_STEPS) sum -= steps.shift()!;
    if (steps.length === RATE_STEPS && sum < needed) {
      req.destroy(new Upstream(`upstream sent ${sum} bytes in ${options.rateWindowMs} ms, under ${options.minBytesPerSecond} bytes/s`));
    }
  }, options.rateWindowMs / RATE_STEPS);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}
