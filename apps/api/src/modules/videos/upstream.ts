// Fetching a video from its upstream provider: one GET (Range forwarded), a connect timeout, an
// idle timeout (no byte for that long, before or after the headers), a few redirects followed, and
// the request aborted when the caller's signal fires (the client went away). The body is handed
// back as the live socket stream: nothing is buffered here.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Invalid, Upstream } from '../../errors.js';

export interface UpstreamOptions {
  range?: string;
  signal: AbortSignal;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function openUpstream(url: string, options: UpstreamOptions): Promise<IncomingMessage> {
  let target = new URL(url);
  for (let redirects = options.maxRedirects ?? 3; ; redirects--) {
    const res = await requestOnce(target, options);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location && redirects > 0) {
      res.resume();
      target = new URL(location, target);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Upstream(`redirect to ${target.protocol}`);
      continue;
    }
    if (status === 200 || status === 206) return res;
    res.resume();
    // A Range the provider cannot satisfy is the client's bad parameter, not a provider failure.
    if (status === 416) throw new Invalid('range not satisfiable', { parameter: 'Range', reason: 'range not satisfiable' });
    throw new Upstream(`upstream answered ${status}`);
  }
}

function requestOnce(url: URL, options: UpstreamOptions): Promise<IncomingMessage> {
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
    });
    let connectTimer: NodeJS.Timeout | undefined;
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => req.destroy(new Upstream(`connect timeout after ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(connectTimer));
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
