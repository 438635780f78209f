// Sending one generation trace (generation-traces.ts) to an `otel-collector` or `s3` destination,
// through the libraries that speak those protocols, under the shared upstream policy:
//
// - otel-collector: OTLP/HTTP (JSON) through OpenTelemetry's own exporter (OTLPTraceExporter), one
//   exporter per attempt. The span is handed to it as the ReadableSpan its export() takes.
// - s3: PutObject through the AWS SDK, one client per attempt, no retries of its own (the delivery
//   schedule retries).
//
// Either way the target's host is checked by the policy first (guardedAddresses), and the library's
// sockets connect only to the addresses checked (an agent with pinnedLookup): a tenant's URL cannot
// reach the platform's network, nor move there by a second DNS answer. Neither library follows
// redirects. What the sender's error says is what status shows: never a URL, a header or a key.
import http from 'node:http';
import https from 'node:https';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { guardedAddresses, pinnedLookup, RefusedUpstream, type UpstreamPolicy } from '../../upstream/index.js';
import { traceJson, type TraceRecord } from './generation-traces.js';

/** A failed send, in words status may show. */
export class SendFailed extends Error {}

const RESOURCE = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'switchyard' });
const SCOPE = { name: 'switchyard.generations', version: '1' };

const hrTime = (at: Date): [number, number] => [Math.floor(at.getTime() / 1000), (at.getTime() % 1000) * 1_000_000];

/** The ReadableSpan of a trace (what a SpanExporter exports). */
function readableSpan(trace: TraceRecord): ReadableSpan {
  const durationMs = trace.endTime.getTime() - trace.startTime.getTime();
  return {
    name: trace.name,
    kind: SpanKind.CLIENT,
    spanContext: () => ({ traceId: trace.traceId, spanId: trace.spanId, traceFlags: 1 }),
    startTime: hrTime(trace.startTime),
    endTime: hrTime(trace.endTime),
    duration: [Math.floor(durationMs / 1000), (durationMs % 1000) * 1_000_000],
    status: { code: trace.status === 'error' ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes: trace.attributes,
    links: [],
    events: [],
    ended: true,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The traces URL of an OTLP/HTTP endpoint: as given when it ends in /v1/traces, else with /v1/traces appended. */
export function otlpTracesUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith('/v1/traces')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url;
}

/** Agent options whose sockets connect only to the checked addresses of `url`. */
async function pinnedAgentOptions(policy: UpstreamPolicy, url: URL): Promise<http.AgentOptions> {
  try {
    return { keepAlive: false, lookup: pinnedLookup(await guardedAddresses(url, policy)) };
  } catch (error) {
    if (error instanceof RefusedUpstream) throw new SendFailed(`the address is refused: ${error.message}`);
    throw new SendFailed((error as Error).message);
  }
}

/** Sends one trace as an OTLP/HTTP span; throws SendFailed unless the collector accepted it. */
export async function sendOtlpTrace(
  policy: UpstreamPolicy,
  config: { endpoint: string; headers?: Record<string, string> },
  trace: TraceRecord,
  timeoutMs: number,
): Promise<void> {
  const url = otlpTracesUrl(config.endpoint);
  const exporter = new OTLPTraceExporter({
    url: url.href,
    headers: config.headers ?? {},
    timeoutMillis: timeoutMs,
    httpAgentOptions: await pinnedAgentOptions(policy, url),
  });
  try {
    const result = await new Promise<ExportResult>((resolve) => exporter.export([readableSpan(trace)], resolve));
    if (result.code !== ExportResultCode.SUCCESS) {
      const status = (result.error as { code?: unknown } | undefined)?.code;
      throw new SendFailed(
        typeof status === 'number' ? `HTTP ${status}` : `the collector did not accept the span: ${result.error?.message ?? 'export failed'}`,
      );
    }
  } finally {
    await exporter.shutdown().catch(() => undefined);
  }
}

export interface S3DestinationConfig {
  bucketName: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region?: string;
  endpoint?: string;
  prefix?: string;
  pathTemplate?: string;
}

/** The object key of a trace: pathTemplate's variables filled in, then `{traceId}-{timestamp}.json`. */
export function traceObjectKey(config: Pick<S3DestinationConfig, 'prefix' | 'pathTemplate'>, trace: TraceRecord, apiKeyName: string): string {
  const at = trace.endTime.toISOString();
  const values: Record<string, string> = {
    prefix: config.prefix ?? 'switchyard-traces',
    date: at.slice(0, 10),
    year: at.slice(0, 4),
    month: at.slice(5, 7),
    day: at.slice(8, 10),
    apiKeyName: apiKeyName.replaceAll('/', '_'),
  };
  const folder = (config.pathTemplate ?? '{prefix}/{date}').replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
  const clean = folder
    .split('/')
    .filter((part) => part !== '' && part !== '.' && part !== '..')
    .join('/');
  return `${clean ? `${clean}/` : ''}${trace.traceId}-${trace.endTime.getTime()}.json`;
}

const DNS_BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,32}$/;

/** Writes one trace as a JSON object; throws SendFailed unless the store took it. */
export async function putTraceObject(
  policy: UpstreamPolicy,
  config: S3DestinationConfig,
  eventId: string,
  trace: TraceRecord,
  apiKeyName: string,
  timeoutMs: number,
): Promise<void> {
  const region = config.region ?? 'us-east-1';
  if (!REGION.test(region)) throw new SendFailed('config.region is not a region name');
  // The host the SDK will connect to: the endpoint given (path-style), or the standard service's
  // virtual host for the bucket (path-style when the bucket name cannot be a host name).
  const pathStyle = config.endpoint !== undefined || !DNS_BUCKET.test(config.bucketName);
  const host = config.endpoint
    ? new URL(config.endpoint)
    : new URL(pathStyle ? `https://s3.${region}.amazonaws.com` : `https://${config.bucketName}.s3.${region}.amazonaws.com`);
  const agent = await pinnedAgentOptions(policy, host);
  const client = new S3Client({
    region,
    endpoint: config.endpoint,
    forcePathStyle: pathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: config.sessionToken },
    maxAttempts: 1,
    requestHandler: { httpAgent: new http.Agent(agent), httpsAgent: new https.Agent(agent), connectionTimeout: timeoutMs, requestTimeout: timeoutMs },
  });
  try {
    await client.send(
      new PutObjectCommand({
        Bucket: config.bucketName,
        Key: traceObjectKey(config, trace, apiKeyName),
        Body: JSON.stringify(traceJson(eventId, trace)),
        ContentType: 'application/json',
      }),
      { abortSignal: AbortSignal.timeout(timeoutMs) },
    );
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    throw new SendFailed(status ? `HTTP ${status} (${e.name ?? 'error'})` : `the store did not take the object: ${e.name ?? 'error'}`);
  } finally {
    client.destroy();
  }
}
