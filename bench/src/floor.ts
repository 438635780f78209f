// A floor server, run as its own process (as the real server is): answers every request with one
// fixed body, the real scenario's answer byte for byte, with the same Content-Type. A tRPC batch of
// n calls (/trpc/a,b,...?batch=1: the recording scenario's client batches its callers' calls) gets
// the answer's one result n times, as the real server would answer it.
//   node floor.js <node|express|database> <port> <body file> <content type> [<statement file>]
// `node` is a bare node:http server; `express` is an express app with one route. Its express is the
// very one @switchyard/api runs on (resolved through that package, so the bench adds no copy).
// `database` is that express app making, before each answer, the statement the server makes for it
// (the statement file: JSON { databaseUrl, poolMax, text, values, vary?, fresh? }) through the
// server's own node-postgres, on a pool of the server's size: the round trip any server of this
// schema pays. `vary` { value, param } puts the request's query parameter `param` wherever the
// values hold `value` (GET /generation?id= reads a random generation per request); each value in
// `fresh` is replaced by a new random one of its shape for every request (POST /keys' id, hash and
// label, which unique columns keep apart): a UUID for a UUID, else hex digits of its length.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';

interface ExpressResponse {
  status(code: number): ExpressResponse;
  type(value: string): ExpressResponse;
  send(body: Buffer): void;
}
interface ExpressApp {
  all(path: string | RegExp, handler: (req: unknown, res: ExpressResponse) => void): void;
  listen(port: number, host: string, callback: () => void): http.Server;
  disable(setting: string): void;
  set(setting: string, value: unknown): void;
}

export interface StatementFile {
  databaseUrl: string;
  poolMax: number;
  text: string;
  values: unknown[];
  vary?: { value: unknown; param: string };
  fresh?: unknown[];
}

const [mode, portText, bodyFile, contentType, statementFile] = process.argv.slice(2);
if (!['node', 'express', 'database'].includes(mode ?? '') || !portText || !bodyFile || !contentType || (mode === 'database') !== Boolean(statementFile)) {
  console.error('usage: floor.js <node|express|database> <port> <body file> <content type> [<statement file>, database only]');
  process.exit(2);
}
const port = Number(portText);
const body = fs.readFileSync(bodyFile);
const batchItem = body.length > 2 && body[0] === 0x5b && body.at(-1) === 0x5d ? body.subarray(1, -1) : null; // [item]
const batches = new Map<number, Buffer>([[1, body]]);

/** The body for this request: the answer, or the batch of n answers for a tRPC batch of n calls. */
function answerFor(url: string | undefined): Buffer {
  const match = batchItem && url ? /^\/trpc\/([^?]+)\?batch=1/.exec(url) : null;
  if (!match) return body;
  const n = match[1]!.split(',').length;
  let answer = batches.get(n);
  if (!answer) {
    answer = Buffer.concat([
      Buffer.from('['),
      ...Array.from({ length: n }, (_, i) => (i ? Buffer.concat([Buffer.from(','), batchItem!]) : batchItem!)),
      Buffer.from(']'),
    ]);
    batches.set(n, answer);
  }
  return answer;
}
const ready = () => process.send?.('ready') ?? console.log('ready');

if (mode === 'node') {
  const server = http.createServer((req, res) => {
    // Drain any request body (feedback and recording scenarios POST one) before answering.
    req.resume();
    req.on('end', () => {
      const answer = answerFor(req.url);
      res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': answer.length });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1', ready);
} else {
  const requireFromApi = createRequire(import.meta.resolve('@switchyard/api'));
  const express = requireFromApi('express') as () => ExpressApp;
  const app = express();
  // The same two settings as apps/api/src/app.ts.
  app.disable('x-powered-by');
  app.set('etag', false);
  const before = mode === 'database' ? roundTrip(JSON.parse(fs.readFileSync(statementFile!, 'utf8')) as StatementFile) : null;
  app.all(/.*/, (req, res) => {
    const url = (req as { url?: string }).url;
    const answer = () => res.status(200).type(contentType).send(answerFor(url));
    (req as NodeJS.ReadableStream).resume();
    (req as NodeJS.ReadableStream).on('end', () => {
      if (!before) return answer();
      before(url).then(answer, (error: Error) => {
        console.error(error.message);
        res.status(500).send(Buffer.from(error.message));
      });
    });
  });
  const server = app.listen(port, '127.0.0.1', ready);
  server.keepAliveTimeout = 65_000;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new random value shaped like `value`: a UUID, or hex digits of the same length. */
function freshLike(value: unknown): string {
  const text = String(value);
  return UUID.test(text)
    ? randomUUID()
    : randomBytes(Math.ceil(text.length / 2))
        .toString('hex')
        .slice(0, text.length);
}

/** The statement's round trip for a request (a named prepared statement, as queryRows sends it). */
function roundTrip(spec: StatementFile): (url: string | undefined) => Promise<unknown> {
  const requireFromDb = createRequire(import.meta.resolve('@switchyard/db'));
  const pg = requireFromDb('pg') as { Pool: new (options: { connectionString: string; max: number }) => { query(q: object): Promise<unknown> } };
  const pool = new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolMax });
  const { vary } = spec;
  const fresh = new Set(spec.fresh ?? []);
  return (url) => {
    const given = vary && url ? new URL(url, 'http://floor').searchParams.get(vary.param) : null;
    const values = spec.values.map((v) => (given !== null && v === vary!.value ? given : fresh.has(v) ? freshLike(v) : v));
    return pool.query({ name: 'floor', text: spec.text, values });
  };
}
