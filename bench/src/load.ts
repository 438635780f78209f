// The load generators: autocannon for HTTP scenarios, N concurrent @switchyard/client callers for
// recording generations one call each (over tRPC), and N callers sharing the client's generation
// recorder (the batch path a routing process uses).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { createGenerationRecorder, createSwitchyardClient, SwitchyardError, type RouterInputs } from '@switchyard/client';
import { readCpuMs, readTreeCpu, cpuSince } from './processes.js';

export interface LoadSpec {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Changes each request (e.g. a random generation id); applied per request by autocannon. */
  vary?: () => { path?: string; body?: string };
}

/** Figures of one measured run against one target. */
export interface Measurement {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
  /**
   * CPU time (ms) the target process used per successful answer (per recording when recording)
   * during the measured run, warm-up excluded: where the cost is, beside the floors' figures. It
   * drifts with this machine's speed too. null when the target's pid is not given or /proc is
   * unreadable.
   */
  cpuMsPerRequest: number | null;
  /**
   * The same for the database: CPU time its processes (the postmaster and every backend) used per
   * answer. On one machine, server and database share the cores: the two together are what an
   * answer costs. null for floors, and where /proc is unreadable.
   */
  dbCpuMsPerRequest?: number | null;
  /** Recording only: every successful recording, warm-up included (for the GET /key check). */
  recorded?: number;
  /** Batch recording only: the generations.recordBatch requests the recorder sent in the measured run. */
  batchRequests?: number;
}

/**
 * Starts counting the CPU time of `pid` and of the database's processes (`dbPid`, its postmaster,
 * and the children of it); the returned function gives the ms each used since.
 */
function cpuMeter(pid: number | undefined, dbPid?: number): () => { server: number | null; db: number | null } {
  const read = () => ({ server: pid === undefined ? null : readCpuMs(pid), db: dbPid === undefined ? null : readTreeCpu(dbPid) });
  const start = read();
  return () => {
    const end = read();
    return {
      server: start.server === null || end.server === null ? null : end.server - start.server,
      db: start.db === null || end.db === null ? null : cpuSince(start.db, end.db),
    };
  };
}

const okCount = (statusCodes: Record<string, number>) => Object.entries(statusCodes).reduce((sum, [code, n]) => (code.startsWith('2') ? sum + n : sum), 0);
const perRequest = (cpuMs: number | null, ok: number) => (cpuMs === null || ok === 0 ? null : cpuMs / ok);

export async function runAutocannon(options: {
  url: string;
  spec: LoadSpec;
  connections: number;
  warmup: number;
  duration: number;
  timeout: number;
  /** The target's pid, for its CPU time per answer. */
  pid?: number;
  /** The database's postmaster, for its CPU time per answer. */
  dbPid?: number;
}): Promise<Measurement> {
  const { spec } = options;
  const vary = spec.vary;
  const base = {
    url: `${options.url}${spec.path}`,
    connections: options.connections,
    timeout: options.timeout,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(vary ? { requests: [{ setupRequest: (request: object) => ({ ...request, ...vary() }) }] } : {}),
  };
  if (options.warmup > 0) await autocannon({ ...base, duration: options.warmup });
  const cpu = cpuMeter(options.pid, options.dbPid);
  // autocannon's own histogram keeps whole milliseconds, which puts a floor's p99 of 2.0–2.99 ms at
  // 2: a 50% step in every ratio to it. Its 'response' events give each answer's time unrounded.
  const latencies: number[] = [];
  const result = await autocannon({ ...base, duration: options.duration }).on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const { server: cpuMs, db: dbMs } = cpu();
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    requests,
    seconds: result.duration,
    requestsPerSecond: requests / result.duration,
    p50Ms: round(percentile(latencies, 0.5)),
    p99Ms: round(percentile(latencies, 0.99)),
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
    cpuMsPerRequest: perRequest(cpuMs, okCount(statusCodes)),
    dbCpuMsPerRequest: perRequest(dbMs, okCount(statusCodes)),
  };
}

/**
 * Large downloads, driven with node:http (keep-alive, `connections` sockets, each downloading
 * `perConnection` times and discarding the bytes). autocannon cannot do this one: it appends every
 * response body to a string (`req.body += data`), so 32 bodies of 100 MiB would measure its own
 * string building (and hold gigabytes) instead of the server. An answer of the wrong length counts
 * as an error.
 */
export async function runDownloads(options: {
  url: string;
  spec: LoadSpec;
  connections: number;
  perConnection: number;
  expectedBytes: number;
  timeoutMs: number;
  pid?: number;
  /** The database's postmaster, for its CPU time per answer. */
  dbPid?: number;
}): Promise<Measurement> {
  const target = new URL(options.spec.path, options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const measurement = await driveRequests(options, (tally, done) => {
    const t = performance.now();
    let bytes = 0;
    const req = http.get(target, { agent, headers: options.spec.headers, timeout: options.timeoutMs });
    settle(req, tally, t, done, {
      data: (chunk) => (bytes += chunk.length),
      wrong: (status) => status >= 200 && status < 300 && bytes !== options.expectedBytes,
    });
  });
  agent.destroy();
  return measurement;
}

/** The answers of a run, as they come: status counts, latencies and errors. */
interface Tally {
  latencies: number[];
  statusCodes: Record<string, number>;
  errors: number;
}

/**
 * `connections` loops of `perConnection` requests each, one at a time per loop; `send` starts one
 * and calls `done` once it is settled (settle()). The server's and database's CPU are measured over
 * the whole run.
 */
async function driveRequests(
  options: { connections: number; perConnection: number; pid?: number; dbPid?: number },
  send: (tally: Tally, done: () => void) => void,
): Promise<Measurement> {
  const tally: Tally = { latencies: [], statusCodes: {}, errors: 0 };
  const started = performance.now();
  const cpu = cpuMeter(options.pid, options.dbPid);
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      for (let i = 0; i < options.perConnection; i++) await new Promise<void>((done) => send(tally, done));
    }),
  );
  const cpuMs = cpu();
  const seconds = (performance.now() - started) / 1000;
  return summarise(tally.latencies, tally.statusCodes, tally.errors, seconds, cpuMs);
}

/**
 * Counts one request's outcome once it ends: its status and latency (from `t`), an error when
 * `answer.wrong` says the answer is not the one expected, or an error when the request or its
 * answer fails. `answer.data` sees the body's chunks as they come.
 */
function settle(
  req: http.ClientRequest,
  tally: Tally,
  t: number,
  done: () => void,
  answer: { data: (chunk: Buffer) => void; wrong: (status: number) => boolean },
): void {
  const failed = () => {
    tally.errors++;
    done();
  };
  req.on('response', (res) => {
    res.on('data', answer.data);
    res.on('end', () => {
      const status = res.statusCode ?? 0;
      tally.statusCodes[String(status)] = (tally.statusCodes[String(status)] ?? 0) + 1;
      if (answer.wrong(status)) tally.errors++;
      tally.latencies.push(performance.now() - t);
      done();
    });
    res.on('error', failed);
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', failed);
}

/**
 * POST /files: `connections` uploads at a time, `perConnection` each, every one a multipart body
 * whose one `file` part is `file` on disk, streamed (node:http: read only as fast as the socket
 * drains). An answer is an error unless it is 200 with a File record of `fileBytes` bytes.
 */
export async function runUploads(options: {
  url: string;
  spec: LoadSpec;
  file: string;
  fileBytes: number;
  connections: number;
  perConnection: number;
  timeoutMs: number;
  pid?: number;
  dbPid?: number;
}): Promise<Measurement> {
  const target = new URL(options.spec.path, options.url);
  const boundary = `bench-${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path.basename(options.file)}"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return driveRequests(options, (tally, done) => {
    const t = performance.now();
    const req = http.request(target, {
      method: 'POST',
      agent: false,
      timeout: options.timeoutMs,
      headers: {
        ...options.spec.headers,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + options.fileBytes + tail.length),
      },
    });
    const chunks: Buffer[] = [];
    settle(req, tally, t, done, {
      data: (chunk) => chunks.push(chunk),
      wrong: (status) => status === 200 && (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { size_bytes?: number }).size_bytes !== options.fileBytes,
    });
    req.write(head);
    const source = fs.createReadStream(options.file, { highWaterMark: 256 * 1024 });
    source.pipe(req, { end: false });
    source.on('end', () => req.end(tail));
    source.on('error', () => req.destroy());
  });
}

/** The `q` quantile of `latencies` (sorted in place); 0 when there are none. */
function percentile(latencies: number[], q: number): number {
  if (!latencies.length) return 0;
  latencies.sort((a, b) => a - b);
  return latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
}

function summarise(
  latencies: number[],
  statusCodes: Record<string, number>,
  errors: number,
  seconds: number,
  cpuMs: { server: number | null; db: number | null },
): Measurement {
  const ok = okCount(statusCodes);
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    requests,
    seconds,
    requestsPerSecond: ok / seconds,
    p50Ms: round(percentile(latencies, 0.5)),
    p99Ms: round(percentile(latencies, 0.99)),
    non2xx: requests - ok,
    errors,
    statusCodes,
    cpuMsPerRequest: perRequest(cpuMs.server, ok),
    dbCpuMsPerRequest: perRequest(cpuMs.db, ok),
  };
}

type RecordInput = RouterInputs['generations']['record'];
type AuthorizeInput = RouterInputs['routing']['authorize'];

/**
 * `callers` loops sharing one client (its batch link sends the calls pending at the same moment in
 * one request, as in runRecorders), each calling routing.authorize back to back for `duration`
 * seconds. Each call's latency and status is routing.authorize's; a refusal counts under its
 * status (401-429), not as an answer. With `settle`, every allowed decision's generation is then
 * recorded with its reservation_id through one shared batch recorder (createGenerationRecorder,
 * default settings), which settles the reservation: each caller's recording runs while it
 * authorizes its next call, and waits for its previous recording before it records again (at most
 * one each in flight, so reservations never pile up); the run ends once all are committed.
 */
export async function runAuthorizers(
  options: { url: string; apiKey: string; callers: number; duration: number; warmup: number; pid?: number; dbPid?: number },
  input: () => AuthorizeInput,
  settle?: (reservationId: string) => RecordInput,
): Promise<Measurement> {
  const client = createSwitchyardClient({ url: options.url, apiKey: options.apiKey });
  const recorder = settle ? createGenerationRecorder({ url: options.url, apiKey: options.apiKey }) : null;
  const recordings: (Promise<void> | undefined)[] = Array.from({ length: options.callers }, () => undefined);
  let failedRecordings = 0;
  const phase = (seconds: number) =>
    closedLoops(options.callers, seconds, async (caller) => {
      const { data: decision } = await client.routing.authorize.mutate(input());
      if (!decision.allowed) throw new Refused(decision.status);
      if (!recorder || !settle) return;
      if (!decision.reservation_id) throw new Error('an authorization with an estimated cost held nothing');
      await recordings[caller];
      recordings[caller] = recorder.record(settle(decision.reservation_id)).then(
        () => undefined,
        () => void failedRecordings++,
      );
    });
  const settled = async () => {
    await Promise.all(recordings);
    await recorder?.flush();
  };
  if (options.warmup > 0) {
    await phase(options.warmup);
    await settled();
    failedRecordings = 0;
  }
  const cpu = cpuMeter(options.pid, options.dbPid);
  const { latencies, statusCodes, errors, seconds } = await phase(options.duration);
  await settled();
  const measured = summarise(latencies, statusCodes, errors + failedRecordings, seconds, cpu());
  await recorder?.close();
  return measured;
}

/** A decision that refused: counted under its status. */
class Refused extends Error {
  constructor(readonly status: number) {
    super(`refused with ${status}`);
  }
}

/**
 * `callers` loops sharing one client, recording generations back to back for `duration` seconds.
 */
export async function runRecorders(
  options: { url: string; apiKey: string; callers: number; duration: number; warmup: number; pid?: number; dbPid?: number },
  input: (caller: number) => RecordInput,
): Promise<Measurement> {
  // The callers share one client, as the request handlers of one routing process would: tRPC's batch
  // link sends the calls that are pending at the same moment in one HTTP request.
  const client = createSwitchyardClient({ url: options.url, apiKey: options.apiKey });
  const clients = Array.from({ length: options.callers }, () => client);
  let recorded = 0;
  const phase = (seconds: number) =>
    closedLoops(clients.length, seconds, async (caller) => {
      await clients[caller]!.generations.record.mutate(input(caller));
      recorded++;
    });
  if (options.warmup > 0) await phase(options.warmup);
  const cpu = cpuMeter(options.pid, options.dbPid);
  const { latencies, statusCodes, errors, seconds } = await phase(options.duration);
  return { ...summarise(latencies, statusCodes, errors, seconds, cpu()), recorded };
}

/**
 * `loops` loops calling `call` back to back for `seconds`: each call's latency, and its status
 * (200, a SwitchyardError's status, or an error when no answer came).
 */
async function closedLoops(loops: number, seconds: number, call: (loop: number) => Promise<void>) {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          await call(loop);
          statusCodes['200'] = (statusCodes['200'] ?? 0) + 1;
        } catch (error) {
          const status = error instanceof SwitchyardError || error instanceof Refused ? error.status : 0;
          if (status === 0) errors++;
          else statusCodes[String(status)] = (statusCodes[String(status)] ?? 0) + 1;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, statusCodes, errors, seconds: (performance.now() - started) / 1000 };
}

/**
 * `callers` loops sharing one generation recorder (createGenerationRecorder, default settings), each
 * keeping `pending` recordings waiting for their answers, for `duration` seconds: a routing process
 * whose request handlers each record their generation when they finish. Every figure but
 * batchRequests counts generations: requestsPerSecond is generations recorded per second, and the
 * latencies are each record() call's, buffering included.
 */
export async function runBatchRecorders(
  options: { url: string; apiKey: string; callers: number; pending: number; duration: number; warmup: number; pid?: number; dbPid?: number },
  input: (caller: number) => RecordInput,
): Promise<Measurement> {
  let requests = 0;
  const recorder = createGenerationRecorder({
    url: options.url,
    apiKey: options.apiKey,
    fetch: (url, init) => {
      requests++;
      return fetch(url, init);
    },
  });
  let recorded = 0;
  const phase = (seconds: number) => {
    requests = 0;
    return closedLoops(options.callers * options.pending, seconds, async (loop) => {
      await recorder.record(input(loop % options.callers));
      recorded++;
    });
  };
  if (options.warmup > 0) await phase(options.warmup);
  const cpu = cpuMeter(options.pid, options.dbPid);
  const { latencies, statusCodes, errors, seconds } = await phase(options.duration);
  const batchRequests = requests;
  await recorder.close();
  return { ...summarise(latencies, statusCodes, errors, seconds, cpu()), recorded, batchRequests };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
