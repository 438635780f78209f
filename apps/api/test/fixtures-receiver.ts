// A webhook receiver on loopback, for the tests that deliver to one: it records every request as it
// arrived (method, path, headers, the raw header lines in order, so that a header sent twice or
// alongside another shows, and the body); `answer` decides the status (or hangs with 'hang').
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The header lines as sent: name, value, name, value… (names as the sender spelled them). */
  rawHeaders: string[];
  body: string;
}

export class Receiver {
  readonly requests: Received[] = [];
  answer: (request: Received) => number | 'hang' = () => 204;
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method!, path: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8') };
      this.requests.push(request);
      const status = this.answer(request);
      if (status !== 'hang') res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : undefined);
    });
  });
  async start(): Promise<this> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return this;
  }
  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The names of a request's header lines, lowercased, in the order sent (a name twice appears twice). */
export const headerNames = (request: Received): string[] => request.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
