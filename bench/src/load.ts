// The two load generators: autocannon for HTTP scenarios, and N concurrent @switchyard/client
// callers for recording generations (the routing service's real path, over tRPC).
import autocannon from 'autocannon';
import { createSwitchyardClient, SwitchyardError, type RouterInputs } from '@switchyard/client';

export interface LoadSpec {
  method: 'GET' | 'POST';
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
  /** Recording only: every successful recording, warm-up included (for the GET /key check). */
  recorded?: number;
}

export async function runAutocannon(options: {
  url: string;
  spec: LoadSpec;
  connections: number;
  warmup: number;
  duration?: number;
  amount?: number;
  timeout: number;
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
  const result = await autocannon({
    ...base,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.duration ?? 10 }),
  });
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    requests,
    seconds: result.duration,
    requestsPerSecond: requests / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
  };
}

type RecordInput = RouterInputs['generations']['record'];

/**
 * `callers` loops, each with its own client (so each call is one HTTP request, as from separate
 * routing-service processes), recording generations back to back for `duration` seconds.
 */
export async function runRecorders(
  options: { url: string; apiKey: string; callers: number; duration: number; warmup: number },
  input: (caller: number) => RecordInput,
): Promise<Measurement> {
  const clients = Array.from({ length: options.callers }, () => createSwitchyardClient({ url: options.url, apiKey: options.apiKey }));
  let recorded = 0;
  const phase = async (seconds: number) => {
    const latencies: number[] = [];
    const statusCodes: Record<string, number> = {};
    let errors = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      clients.map(async (client, caller) => {
        while (performance.now() < deadline) {
          const t = performance.now();
          try {
            await client.generations.record.mutate(input(caller));
            recorded++;
            statusCodes['200'] = (statusCodes['200'] ?? 0) + 1;
          } catch (error) {
            const status = error instanceof SwitchyardError ? error.status : 0;
            if (status === 0) errors++;
            else statusCodes[String(status)] = (statusCodes[String(status)] ?? 0) + 1;
          }
          latencies.push(performance.now() - t);
        }
      }),
    );
    return { latencies, statusCodes, errors, seconds: (performance.now() - started) / 1000 };
  };
  if (options.warmup > 0) await phase(options.warmup);
  const { latencies, statusCodes, errors, seconds } = await phase(options.duration);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! : 0);
  const ok = statusCodes['200'] ?? 0;
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    requests,
    seconds,
    requestsPerSecond: ok / seconds,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    non2xx: requests - ok,
    errors,
    statusCodes,
    recorded,
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
