// Generation traces (generation-traces.ts) as sent: built from a generation for one destination
// (traceOf), and sent to an `otel-collector` or `s3` destination through the libraries that speak
// those protocols, under the shared upstream policy. delivery.ts loads this module when it first
// sends a trace: its libraries take tens of MB that a server without trace destinations never needs.
//
// - otel-collector: OTLP/HTTP (JSON) through OpenTelemetry's own exporter (OTLPTraceExporter), one
//   exporter per attempt, one export of every span of the attempt. The spans are handed to it as the
//   ReadableSpans its export() takes.
// - s3: PutObject through the AWS SDK, one client per attempt and one object per trace, a few at
//   once, no retries of the SDK's own (the delivery schedule retries).
//
// Either way the target's host is checked by the policy first (guardedAddresses), and the library's
// sockets connect only to the addresses checked (an agent with pinnedLookup): a tenant's URL cannot
// reach the platform's network, nor move there by a second DNS answer. Neither library follows
// redirects. What the sender's error says is what status shows: never a URL, a header or a key.
import '../../lib/aws-sdk-notice.js';
import { createHash } from 'node:crypto';
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
import { sendableHeaders } from '../destinations/destinations-secrets.js';
import { AttemptFailed } from './attempt-errors.js';
import { GENERATION_RECORDED, GENERATION_TRACE_VERSION, regionOf, type TraceSource } from './generation-traces.js';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_USER_AGENT_ORIGINAL,
  ATTR_USER_ID,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
} from '@opentelemetry/semantic-conventions/incubating';

/** A trace as it is sent: one span. */
export interface TraceRecord {
  traceId: string;
  spanId: string;
  name: string;
  startTime: Date;
  endTime: Date;
  /** error when the generation finished with an error; unset otherwise (OpenTelemetry leaves success unset). */
  status: 'unset' | 'error';
  attributes: Record<string, string | number | boolean | string[]>;
}

/** What a destination decides about a trace's content. */
export interface TraceOptions {
  privacy_mode: boolean;
  broadcast_generation_cost: boolean;
  broadcast_generation_identity: boolean;
  broadcast_generation_request_context: boolean;
}

/** GenAI's message shape: { role, parts: [{ type: 'text', content }] }; other parts keep their type. */
function genAiMessages(input: unknown): unknown[] {
  const messages = (input as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.map((m: { role?: unknown; content?: unknown }) => ({
    role: m?.role,
    parts:
      typeof m?.content === 'string'
        ? [{ type: 'text', content: m.content }]
        : Array.isArray(m?.content)
          ? m.content.map((p: { type?: unknown; text?: unknown }) =>
              p?.type === 'text' && typeof p.text === 'string' ? { type: 'text', content: p.text } : { type: String(p?.type ?? 'unknown') },
            )
          : [],
  }));
}

const decimal = (value: { toNumber(): number } | null) => (value === null ? undefined : value.toNumber());

/** The span of one generation, for one destination's options. */
export function traceOf(eventId: string, source: TraceSource, options: TraceOptions): TraceRecord {
  const g = source.generation;
  const attributes: Record<string, string | number | boolean | string[] | undefined> = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    [ATTR_GEN_AI_PROVIDER_NAME]: g.provider_name ?? undefined,
    [ATTR_GEN_AI_REQUEST_MODEL]: g.model,
    [ATTR_GEN_AI_RESPONSE_MODEL]: g.model,
    [ATTR_GEN_AI_RESPONSE_ID]: g.upstream_id ?? g.id,
    [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: g.finish_reason ? [g.finish_reason] : undefined,
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: g.tokens_prompt,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: g.tokens_completion,
    [ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: g.native_tokens_reasoning ?? undefined,
    [ATTR_GEN_AI_CONVERSATION_ID]: g.session_id ?? undefined,
    'switchyard.generation.id': g.id,
    'switchyard.workspace.id': g.workspace_id,
    'switchyard.streamed': g.streamed,
    'switchyard.cancelled': g.cancelled,
    'switchyard.latency_ms': g.latency ?? undefined,
    'switchyard.generation_time_ms': g.generation_time ?? undefined,
  };
  if (options.broadcast_generation_cost) {
    Object.assign(attributes, {
      'switchyard.cost.total_usd': g.total_cost.toNumber(),
      'switchyard.cost.usage_usd': g.usage.toNumber(),
      'switchyard.cost.upstream_inference_usd': decimal(g.upstream_inference_cost),
      'switchyard.cost.cache_discount_usd': decimal(g.cache_discount),
      'switchyard.is_byok': g.is_byok,
      'switchyard.is_free': g.is_free,
    });
  }
  if (options.broadcast_generation_identity) {
    Object.assign(attributes, {
      [ATTR_USER_ID]: g.external_user ?? undefined,
      'switchyard.api_key.name': source.apiKeyName,
      'switchyard.api_key.creator_user_id': g.user_id,
    });
  }
  if (options.broadcast_generation_request_context) {
    Object.assign(attributes, {
      [ATTR_USER_AGENT_ORIGINAL]: g.user_agent ?? undefined,
      'switchyard.request.id': g.request_id ?? undefined,
      'switchyard.http_referer': g.http_referer ?? undefined,
      'switchyard.origin': g.origin ?? undefined,
      'switchyard.app_id': g.app_id ?? undefined,
      'switchyard.api_type': g.api_type ?? undefined,
      'switchyard.router': g.router ?? undefined,
      'switchyard.preset_id': g.preset_id ?? undefined,
      'switchyard.data_region': regionOf(g.data_region),
      'switchyard.service_tier': g.service_tier ?? undefined,
    });
  }
  if (!options.privacy_mode && source.ioLogging && source.content) {
    attributes[ATTR_GEN_AI_INPUT_MESSAGES] = JSON.stringify(genAiMessages(source.content.input));
    attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] = JSON.stringify([
      { role: 'assistant', parts: [{ type: 'text', content: source.content.completion }], finish_reason: g.finish_reason ?? 'stop' },
    ]);
  }
  const end = g.created_at;
  return {
    traceId: eventId.replaceAll('-', ''),
    spanId: createHash('sha256').update(eventId).digest('hex').slice(0, 16),
    name: `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${g.model}`,
    startTime: new Date(end.getTime() - Math.max(0, g.latency ?? 0)),
    endTime: end,
    status: g.finish_reason === 'error' ? 'error' : 'unset',
    attributes: Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as TraceRecord['attributes'],
  };
}

/** A trace as JSON (the body of an s3 object): the span's fields, snake_case, times as ISO strings. */
export function traceJson(eventId: string, trace: TraceRecord) {
  return {
    id: eventId,
    type: GENERATION_RECORDED,
    timestamp: trace.endTime.toISOString(),
    data: {
      version: GENERATION_TRACE_VERSION,
      trace_id: trace.traceId,
      span_id: trace.spanId,
      name: trace.name,
      start_time: trace.startTime.toISOString(),
      end_time: trace.endTime.toISOString(),
      status: trace.status,
      attributes: trace.attributes,
    },
  };
}

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
    if (error instanceof RefusedUpstream) throw new AttemptFailed(`the address is refused: ${error.message}`);
    throw new AttemptFailed((error as Error).message);
  }
}

export interface OtlpDestinationConfig {
  endpoint: string;
  headers?: Record<string, string>;
}

/** Sends traces as OTLP/HTTP spans in one export; throws AttemptFailed unless the collector accepted them. */
export async function sendOtlpTraces(policy: UpstreamPolicy, config: OtlpDestinationConfig, traces: readonly TraceRecord[], timeoutMs: number): Promise<void> {
  const url = otlpTracesUrl(config.endpoint);
  const exporter = new OTLPTraceExporter({
    url: url.href,
    // Not the headers the exporter owns (Host, framing, its Content-Type), which an old row may hold.
    headers: sendableHeaders(config),
    timeoutMillis: timeoutMs,
    httpAgentOptions: await pinnedAgentOptions(policy, url),
  });
  try {
    const result = await new Promise<ExportResult>((resolve) => exporter.export(traces.map(readableSpan), resolve));
    if (result.code !== ExportResultCode.SUCCESS) {
      const status = (result.error as { code?: unknown } | undefined)?.code;
      throw new AttemptFailed(
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

/** Objects written at once by one attempt. */
const S3_PARALLEL = 8;

/**
 * Writes each trace as a JSON object: answers, in order, null for each the store took and a
 * AttemptFailed for each it did not; throws AttemptFailed when nothing can be sent (a refused address).
 */
export async function putTraceObjects(
  policy: UpstreamPolicy,
  config: S3DestinationConfig,
  items: readonly { eventId: string; trace: TraceRecord; apiKeyName: string }[],
  timeoutMs: number,
): Promise<(AttemptFailed | null)[]> {
  const region = config.region ?? 'us-east-1';
  if (!REGION.test(region)) throw new AttemptFailed('config.region is not a region name');
  // The host the SDK will connect to: the endpoint given (path-style), or the standard service's
  // virtual host for the bucket (path-style when the bucket name cannot be a host name).
  const pathStyle = config.endpoint !== undefined || !DNS_BUCKET.test(config.bucketName);
  const host = config.endpoint
    ? new URL(config.endpoint)
    : new URL(pathStyle ? `https://s3.${region}.amazonaws.com` : `https://${config.bucketName}.s3.${region}.amazonaws.com`);
  const agent = { ...(await pinnedAgentOptions(policy, host)), keepAlive: true, maxSockets: S3_PARALLEL };
  const client = new S3Client({
    region,
    endpoint: config.endpoint,
    forcePathStyle: pathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: config.sessionToken },
    maxAttempts: 1,
    requestHandler: { httpAgent: new http.Agent(agent), httpsAgent: new https.Agent(agent), connectionTimeout: timeoutMs, requestTimeout: timeoutMs },
  });
  const put = async ({ eventId, trace, apiKeyName }: (typeof items)[number]): Promise<AttemptFailed | null> => {
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
      return null;
    } catch (error) {
      const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      return new AttemptFailed(status ? `HTTP ${status} (${e.name ?? 'error'})` : `the store did not take the object: ${e.name ?? 'error'}`);
    }
  };
  try {
    const results: (AttemptFailed | null)[] = new Array(items.length).fill(null);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await put(items[i]!);
    };
    await Promise.all(Array.from({ length: Math.min(S3_PARALLEL, items.length) }, lane));
    return results;
  } finally {
    client.destroy();
  }
}
