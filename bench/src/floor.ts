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
// label, which unique columns keep apart): a UUID for a UUID, else hex digits of its length. A
// tRPC batch of n calls makes the statement n times, at once (as the server makes each call's). With
// `release` { text, value }, every RELEASE_EVERY_MS the floor runs `text` once with $1 the array of
// the new values it gave `value` since (routing.authorize's reservation: the floor lets go of what
// it reserved in batches, as the server's recorder settles in batches, so that its reservations do
// not pile up and slow its own statement, which sums the open ones).
// With `record` { row, content } instead of a statement (the recording floor), each request is
// one recording transaction as the server's recorder writes it (record-statement.ts): BEGIN, the
// recorder's statement for the request's generations (the template row, with a new id and the
// time now, once per call of a tRPC batch or per generation of a generations.recordBatch call),
// the events statement of what it recorded, COMMIT. A recordBatch call of n generations is
// answered with the answer's one result n times, as the client's recorder expects one a generation.
// With `reserve` (the reservation floor), each call is a reservation with a new id, made through the
// server's own ReservationQueue (an organization's reservations that wait while its statement is
// under way go together in the next one), and let go of in batches through `release` as above.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { Reservation } from '@switchyard/api/statements';

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
  release?: { text: string; value: unknown };
  /** The recording floor: a recorded generation's row (its non-null columns) and the content it was recorded with. */
  record?: { row: Record<string, unknown>; content: unknown };
  /** The reservation floor: a reservation's inputs but its id and time, made through the server's ReservationQueue. */
  reserve?: Omit<Reservation, 'id' | 'now'> & { now?: never; release: string };
}

const RELEASE_EVERY_MS = 20;

const [mode, portText, bodyFile, contentType, statementFile] = process.argv.slice(2);
if (!['node', 'express', 'database'].includes(mode ?? '') || !portText || !bodyFile || !contentType || (mode === 'database') !== Boolean(statementFile)) {
  console.error('usage: floor.js <node|express|database> <port> <body file> <content type> [<statement file>, database only]');
  process.exit(2);
}
const port = Number(portText);
const body = fs.readFileSync(bodyFile);
const batchItem = body.length > 2 && body[0] === 0x5b && body.at(-1) === 0x5d ? body.subarray(1, -1) : null; // [item]
const batches = new Map<number, Buffer>([[1, body]]);

/** The calls of this request: n for a tRPC batch of n calls, else 1. */
function callsOf(url: string | undefined): number {
  const match = url ? /^\/trpc\/([^?]+)\?batch=1/.exec(url) : null;
  return match ? match[1]!.split(',').length : 1;
}

/** generations.recordBatch's answer with its one result n times (a recordBatch call of n generations). */
const recordBatchAnswers = new Map<number, Buffer>();
function recordBatchAnswer(n: number): Buffer {
  let answer = recordBatchAnswers.get(n);
  if (!answer) {
    const parsed = JSON.parse(body.toString('utf8')) as { result: { data: { results: unknown[] } } };
    const [result] = parsed.result.data.results;
    parsed.result.data.results = Array.from({ length: n }, () => result);
    answer = Buffer.from(JSON.stringify(parsed));
    recordBatchAnswers.set(n, answer);
  }
  return answer;
}

/** The body for this request: the answer, or the batch of n answers for a tRPC batch of n calls. */
function answerFor(url: string | undefined, generations?: number): Buffer {
  if (generations !== undefined) return recordBatchAnswer(generations);
  const n = callsOf(url);
  if (!batchItem || n === 1) return body;
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
  const spec = mode === 'database' ? (JSON.parse(fs.readFileSync(statementFile!, 'utf8')) as StatementFile) : null;
  const before = spec ? (spec.record ? await recording(spec) : spec.reserve ? await reserving(spec) : roundTrip(spec)) : null;
  app.all(/.*/, (req, res) => {
    const url = (req as { url?: string }).url;
    const stream = req as NodeJS.ReadableStream;
    // A recordBatch call's generations decide its transaction and its answer: read its body.
    const chunks: Buffer[] | null = spec?.record && url?.includes('generations.recordBatch') ? [] : null;
    let generations: number | undefined;
    const answer = () => res.status(200).type(contentType).send(answerFor(url, generations));
    if (chunks) stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    else stream.resume();
    stream.on('end', () => {
      if (chunks) generations = generationsOf(Buffer.concat(chunks));
      if (!before) return answer();
      before(url, generations).then(answer, (error: Error) => {
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

/** The statement's round trips for a request (a named prepared statement, as queryRows sends it; one per call of a batch). */
function roundTrip(spec: StatementFile): (url: string | undefined, generations?: number) => Promise<unknown> {
  const pool = poolOf<{ query(q: object): Promise<unknown> }>(spec);
  const { vary, release } = spec;
  const fresh = new Set(spec.fresh ?? []);
  const held = release ? releaser(pool, release.text) : [];
  const once = (url: string | undefined) => {
    const given = vary && url ? new URL(url, 'http://floor').searchParams.get(vary.param) : null;
    const values = spec.values.map((v) => {
      if (given !== null && v === vary!.value) return given;
      if (!fresh.has(v)) return v;
      const value = freshLike(v);
      if (release && v === release.value) held.push(value);
      return value;
    });
    return pool.query({ name: 'floor', text: spec.text, values });
  };
  return (url) => {
    const n = callsOf(url);
    return n === 1 ? once(url) : Promise.all(Array.from({ length: n }, () => once(url)));
  };
}

/** A new pg pool of the server's size, through the server's own node-postgres. */
function poolOf<Pool>(spec: StatementFile): Pool {
  const requireFromDb = createRequire(import.meta.resolve('@switchyard/db'));
  const pg = requireFromDb('pg') as { Pool: new (options: { connectionString: string; max: number }) => Pool };
  return new pg.Pool({ connectionString: spec.databaseUrl, max: spec.poolMax });
}

/** Every RELEASE_EVERY_MS, runs `text` with $1 the ids held since; returns where to add them. */
function releaser(pool: { query(q: object): Promise<unknown> }, text: string): string[] {
  const held: string[] = [];
  setInterval(() => {
    if (held.length === 0) return;
    const ids = held.splice(0);
    pool.query({ name: 'floor-release', text, values: [ids] }).catch((error: Error) => console.error(error.message));
  }, RELEASE_EVERY_MS).unref();
  return held;
}

/** The reservations of a request (one per call of a tRPC batch), made through the server's ReservationQueue. */
async function reserving(spec: StatementFile): Promise<(url: string | undefined) => Promise<unknown>> {
  const { ReservationQueue } = await import('@switchyard/api/statements');
  const { orderedValues } = await import('@switchyard/db');
  const pool = poolOf<{ query(q: object): Promise<{ rows: unknown[] }> }>(spec);
  const { release, ...reservation } = spec.reserve!;
  const held = releaser(pool, release);
  const queue = new ReservationQueue(
    async (statement, values) => (await pool.query({ name: statement.name, text: statement.text, values: orderedValues(statement, values) })).rows as never,
  );
  const once = async () => {
    const id = randomUUID();
    await queue.reserve({ ...reservation, id, now: new Date() });
    held.push(id);
  };
  return (url) => Promise.all(Array.from({ length: callsOf(url) }, once));
}

/** The generations of a generations.recordBatch request body ({ generations: [...] }). */
function generationsOf(requestBody: Buffer): number {
  const parsed = JSON.parse(requestBody.toString('utf8')) as { generations?: unknown[] };
  if (!Array.isArray(parsed.generations)) throw new Error('a recordBatch request without generations');
  return parsed.generations.length;
}

let recordSequence = 0;

/**
 * The recording transaction for a request: the request's generations (n calls of a tRPC batch, or a
 * recordBatch call's), each the template row with a new id and created now, written in one
 * transaction on one connection of the pool, as the server's recorder writes a batch.
 */
async function recording(spec: StatementFile): Promise<(url: string | undefined, generations?: number) => Promise<unknown>> {
  const { writeRecording } = await import('./record-statement.js');
  type Client = { query(q: object | string): Promise<{ rows: unknown[] }>; release(): void };
  const pool = poolOf<{ connect(): Promise<Client> }>(spec);
  const template = spec.record!;
  const prefix = `floor-${process.pid}-${randomBytes(4).toString('hex')}`;
  return async (url, generations) => {
    const ids = Array.from({ length: generations ?? callsOf(url) }, () => `${prefix}-${++recordSequence}`);
    const client = await pool.connect();
    try {
      await writeRecording(client, template, ids, new Date());
    } finally {
      client.release();
    }
  };
}
