// Property-based: every REST operation, driven from the router's own route list and input schemas
// (restOperations(): the procedures with an OpenAPI path and the raw express routes), with random
// and hostile requests. No operation is special-cased, so operations added later are covered as
// they appear. For every answer: never a 5xx; an error is the JSON envelope with code equal to the
// status and the spec's message; and its status is one the operation declares.
//
// Fixed seed and bounded runs; a failure names the seed and the request (HOSTILE_SEED and
// HOSTILE_RUNS override them, e.g. HOSTILE_RUNS=500 for a longer hunt). Besides the answer, the
// server's log must show no internal error and no value a schema let through to the database.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_MESSAGES, ErrorEnvelopeSchema, OAuthErrorBodySchema, type ErrorStatus } from '@switchyard/schema';
import { PLATFORM_ONLY_MESSAGE } from '../../src/access/rules.js';
import { restOperations, type OperationEntry } from '../../src/http/operations.js';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { appRouter } from '../../src/router.js';
import type { TestServer } from '../../src/testing/test-server.js';
import { testServer } from '../fixtures.js';
import { buildWorld, type World } from '../fixtures-world.js';
import { BINARY_SAMPLES, BOUNDARY, multipart, TEXT_SAMPLES } from '../fixtures-upload.js';
import { scaled } from '@switchyard/db/testing';

const SEED = Number(process.env.HOSTILE_SEED ?? 1414);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 80);

let server: TestServer;
let world: World;
const agent = new http.Agent({ keepAlive: true });
beforeAll(async () => {
  server = await testServer();
  world = await buildWorld(server);
});
afterAll(async () => {
  agent.destroy();
  await server?.close();
});

// ---- values ---------------------------------------------------------------------------------

/** Nesting 10,000 deep, written into JSON text as it is serialised (no recursion anywhere). */
class Deep {
  constructor(
    readonly depth: number,
    readonly kind: 'array' | 'object',
  ) {}
  json(): string {
    return this.kind === 'array' ? '['.repeat(this.depth) + ']'.repeat(this.depth) : '{"a":'.repeat(this.depth) + '0' + '}'.repeat(this.depth);
  }
}

const hostileStrings = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udfff\ud800',
  'x'.repeat(100_000),
  'é'.repeat(3_000),
  '',
  ' ',
  '.',
  '..',
  '../../etc/passwd',
  '%',
  '%00',
  '%zz',
  'null',
  'NaN',
  '-0',
  '1e308',
  '9007199254740993',
  '0x10',
  '\u202e\ufeff😀',
  '<script>',
  "'; DROP TABLE users; --",
);
const hostileNumbers = fc.constantFrom(1e308, -1e308, -0, Number.NaN, 1.5, -1, 0, 2 ** 53 + 2, -(2 ** 63), Number.MAX_SAFE_INTEGER, 5e-324);
const wrongTypes = fc.constantFrom<unknown>(true, false, null, {}, [], { a: 1 }, [1, 'two', null], [[[]]]);
const deep = fc.constantFrom(new Deep(10_000, 'array'), new Deep(10_000, 'object'), new Deep(65, 'array'));

/** A real value with a NUL or a lone surrogate slipped in: what gets past checks that only look at shapes. */
const tainted = (real: string[]) =>
  fc
    .tuple(fc.constantFrom(...real), fc.constantFrom('\u0000', '\ud800', '\udc00'), fc.nat())
    .map(([text, bad, at]) => text.slice(0, at % (text.length + 1)) + bad + text.slice(at % (text.length + 1)));

/** Hostile values of every kind. */
const hostileOf = (real: string[]): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: hostileStrings },
    { weight: 3, arbitrary: tainted(real) },
    { weight: 2, arbitrary: hostileNumbers },
    { weight: 1, arbitrary: wrongTypes },
    { weight: 1, arbitrary: deep },
  );

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
}

const INT32 = 2 ** 31 - 1;
const clamp = (n: number | undefined, fallback: number) => Math.max(-INT32, Math.min(INT32, n ?? fallback));

/**
 * Real values of the world, by the name of the field or parameter that might carry them (any
 * operation's `id` may be any of the ids); names not listed draw from all of them.
 */
type RealValues = Record<string, string[]> & { any: string[] };

/** Values the schema allows (kept small), mixed with the world's real identifiers for strings. */
function allowed(schema: JsonSchema, real: string[]): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => allowed(s, real)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string': {
      const text = schema.pattern
        ? fc.stringMatching(new RegExp(schema.pattern))
        : fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
      return fc.oneof(text, fc.constantFrom(...real));
    }
    case 'integer':
      return fc.integer({ min: clamp(schema.minimum, -1000), max: clamp(schema.maximum, 1000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(allowed(schema.items ?? {}, real), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) });
    case 'object':
      return objectOf(schema, { any: real }, [], { clean: true });
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/**
 * How a request is made: `clean` (well-formed: real values or values the schema allows, a valid
 * key, a JSON body), `target` (clean but for one hostile field: what reaches the deepest code), or
 * neither (wild: any field, header, key or body may be hostile).
 */
interface Plan {
  clean: boolean;
  target?: string;
}
const wellFormed = (plan: Plan) => plan.clean || plan.target !== undefined;

/** A field named `name`, as the plan has it: valid (a real value for that name, or allowed), hostile, or either. */
function field(schema: JsonSchema, name: string, real: RealValues, plan: Plan): fc.Arbitrary<unknown> {
  const mine = real[name];
  const free = schema.type === 'string' && !schema.enum && !schema.pattern;
  const valid = mine
    ? fc.oneof(
        { weight: 3, arbitrary: schema.type === 'array' ? fc.array(fc.constantFrom(...mine), { minLength: 1, maxLength: 3 }) : fc.constantFrom(...mine) },
        { weight: 1, arbitrary: allowed(schema, real.any) },
      )
    : free
      ? fc.oneof(fc.constantFrom(...real.any), allowed(schema, real.any))
      : allowed(schema, real.any);
  if (plan.target === name) return hostileOf(mine ?? real.any);
  if (wellFormed(plan)) return valid;
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostileOf(mine ?? real.any) });
}

/** An object of the schema's properties (minus `skip`): required ones (and the target) present, others sometimes. */
function objectOf(schema: JsonSchema, real: RealValues, skip: string[], plan: Plan): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(schema.properties ?? {}).filter(([name]) => !skip.includes(name));
  const required = new Set(schema.required ?? []);
  const presence = (name: string) => (name === plan.target ? 1_000_000 : required.has(name) ? (wellFormed(plan) ? 1000 : 12) : 2);
  return fc
    .tuple(
      ...entries.map(([name, s]) => fc.option(field(s, name, real, plan), { freq: presence(name), nil: undefined }).map((value) => [name, value] as const)),
      fc.option(fc.tuple(fc.constantFrom('extra', '__proto__', 'constructor', '\u0000'), hostileOf(real.any)), {
        freq: wellFormed(plan) ? 1_000_000 : 4,
        nil: undefined,
      }),
    )
    .map((pairs) => {
      const object: Record<string, unknown> = {};
      for (const pair of pairs) if (pair && pair[1] !== undefined) object[pair[0]] = pair[1];
      return object;
    });
}

/** JSON text for a value, with Deep values written in place. */
function jsonOf(value: unknown): string {
  const deeps: Deep[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Deep) {
      deeps.push(v);
      return `\u0001deep${deeps.length - 1}\u0001`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"\\u0001deep(\d+)\\u0001"/g, (_m, i: string) => deeps[Number(i)]!.json());
}

/** Percent-encodes any string, lone surrogates included (as the bytes a careless client sends). */
function encode(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    out +=
      code >= 0xd800 && code <= 0xdfff
        ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
        : encodeURIComponent(char);
  }
  return out;
}

/** A value as it travels in a query string or a path segment. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Object.is(value, -0)) return '-0';
  if (value instanceof Deep) return value.json().slice(0, 20_000);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return jsonOf(value);
}

// ---- requests -------------------------------------------------------------------------------

interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A short description of a request, for failure reports (values may be 100,000 characters long). */
function describeRequest(request: HostileRequest): string {
  const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}... (${s.length} characters)` : s);
  const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, clip(v)]));
  const body = request.body ? clip(request.body.toString('latin1')) : undefined;
  return JSON.stringify({ method: request.method, path: clip(request.path), headers, body });
}

const PATH_ENCODINGS = fc.constantFrom('%', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%00', 'a%2Fb', '%2e%2e');

const BODIES = fc.constantFrom('', '{', '{"a":', 'null', '[]', '"text"', '123', '{"a":1}{"b":2}', '\u00ff\u00fe', '{"a":"\\ud800"}', '{"a":"\\u0000"}');
const CONTENT_TYPES = fc.constantFrom(
  'APPLICATION/JSON',
  'application/json; charset=UTF-8',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'text/plain',
  'application/jsonx',
  'multipart/form-data; boundary=x',
  '',
);
const ENCODINGS = fc.constantFrom('gzip', 'gzip-plain', 'deflate-plain', 'br-plain', 'x-unknown', 'identity');
const MALFORMED_KEYS = (management: string) =>
  fc.constantFrom('Bearer', 'Bearer ', `Basic ${management}`, `Bearer sk-sy-v1-${'z'.repeat(64)}`, `Bearer ${'k'.repeat(20_000)}`);

/** A request for `op`: clean a quarter of the time, one hostile field half of the time, else wild. */
/** Content a `file` part may carry: accepted types, unknown bytes, empty, text that is almost UTF-8. */
const PART_CONTENT = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...[...BINARY_SAMPLES, ...TEXT_SAMPLES].map((sample) => sample.bytes)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((text) => Buffer.from(text, 'utf8')) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.alloc(0), Buffer.from([0xc3]), Buffer.from('a\u0000b'), Buffer.from('PK\u0003\u0004', 'latin1')) },
);
const PART_NAMES = fc.constantFrom('file', 'file', 'file', 'files', 'FILE', '', 'file"', 'purpose');
const FILENAMES = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a.txt', 'report.pdf', 'Zoë.md', 'x') },
  { weight: 2, arbitrary: hostileStrings.map((text) => text.replace(/["\r\n]/g, '')) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/**
 * A multipart/form-data body for POST /files: well-formed (one `file` part with a filename), or
 * not (other part names, no filename, extra fields and files, a cut-off body, a wrong or missing
 * boundary, hostile filenames and part headers).
 */
function multipartBody(formed: boolean): fc.Arbitrary<{ headers: Record<string, string>; body?: Buffer }> {
  const wellFormedBody = fc.tuple(PART_CONTENT, fc.constantFrom('a.txt', 'report.pdf', 'Zoë.md')).map(([bytes, filename]) => ({
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: multipart([{ name: 'file', filename, bytes }]),
  }));
  if (formed) return wellFormedBody;
  const part = fc.record({
    name: PART_NAMES,
    filename: FILENAMES,
    bytes: PART_CONTENT,
    type: fc.constantFrom('text/plain', 'application/octet-stream', '\u00ff/\u00ff', ''),
  });
  const contentType = fc.constantFrom(
    `multipart/form-data; boundary=${BOUNDARY}`,
    `multipart/form-data; boundary=${BOUNDARY}`,
    'multipart/form-data',
    'multipart/form-data; boundary=other',
    `multipart/mixed; boundary=${BOUNDARY}`,
    `multipart/form-data; boundary="${BOUNDARY}"; charset=latin1`,
    'application/x-www-form-urlencoded',
    '',
  );
  const wild = fc
    .tuple(fc.array(part, { maxLength: 3 }), contentType, fc.boolean(), fc.nat(), fc.boolean())
    .map(([parts, type, unterminated, cut, truncate]) => {
      let body = multipart(parts, { unterminated });
      if (truncate) body = body.subarray(0, cut % (body.length + 1));
      return { headers: type ? { 'content-type': type } : ({} as Record<string, string>), body };
    });
  return fc.oneof({ weight: 1, arbitrary: wellFormedBody }, { weight: 3, arbitrary: wild });
}

function requestOf(op: OperationEntry, real: RealValues, keys: Record<string, string>): fc.Arbitrary<HostileRequest> {
  // An empty registry: the records' names (@switchyard/schema's openapi-names.ts) would turn them
  // into $refs, which the generators here do not follow; every schema inline, as they expect.
  const schema = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any', metadata: z.registry() }) as JsonSchema;
  const names = Object.keys(schema.properties ?? {});
  const targeted = names.length ? fc.oneof(...names.map((target) => requestFor(op, schema, real, keys, { clean: false, target }))) : undefined;
  return fc.oneof(
    { weight: 1, arbitrary: requestFor(op, schema, real, keys, { clean: true }) },
    { weight: 2, arbitrary: targeted ?? requestFor(op, schema, real, keys, { clean: false }) },
    { weight: 1, arbitrary: requestFor(op, schema, real, keys, { clean: false }) },
  );
}

function requestFor(op: OperationEntry, schema: JsonSchema, real: RealValues, keys: Record<string, string>, plan: Plan): fc.Arbitrary<HostileRequest> {
  const pathNames = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const properties = schema.properties ?? {};
  const formed = wellFormed(plan);

  const segment = (name: string) => {
    const value = field(properties[name] ?? { type: 'string' }, name, real, plan).map((v) => encode(textOf(v)) || '%20');
    return formed && plan.target !== name ? value : fc.oneof({ weight: 8, arbitrary: value }, { weight: 1, arbitrary: PATH_ENCODINGS });
  };
  const path = fc.tuple(...pathNames.map(segment)).map((segments) => {
    let i = 0;
    return op.path.replace(/\{\w+\}/g, () => segments[i++]!);
  });

  const query =
    op.body === 'none' || op.body === 'multipart'
      ? fc
          .tuple(
            objectOf(schema, real, pathNames, plan),
            plan.target ? fc.constant([plan.target]) : formed ? fc.constant<string[]>([]) : fc.subarray(Object.keys(properties)),
            fc.boolean(),
            fc.option(fc.constantFrom('%', '%zz', '&&', '=', 'a=%00', 'a[b]=1'), { freq: formed ? 1_000_000 : 6, nil: undefined }),
          )
          .map(([object, repeatable, repeat, raw]) => {
            const parts: string[] = [];
            for (const [name, value] of Object.entries(object)) {
              const pair = `${encode(name)}=${encode(textOf(value))}`;
              parts.push(pair);
              // A parameter given twice (the target: half of the time).
              if (repeatable.includes(name) && (repeat || !plan.target)) parts.push(pair);
            }
            if (raw !== undefined) parts.push(raw);
            return parts.length ? `?${parts.join('&')}` : '';
          })
      : fc.constant('');

  const key = formed
    ? fc.constantFrom(keys.management!, keys.management!, keys.regular!, keys.platform!)
    : fc.oneof(
        { weight: 6, arbitrary: fc.constant(keys.management!) },
        { weight: 2, arbitrary: fc.constant(keys.regular!) },
        { weight: 2, arbitrary: fc.constant(keys.platform!) },
        { weight: 1, arbitrary: fc.constant(keys.foreign!) },
        { weight: 1, arbitrary: fc.constant<string | null>(null) },
        { weight: 1, arbitrary: MALFORMED_KEYS(keys.management!) },
      );

  type Sent = { headers: Record<string, string>; body?: Buffer };
  const json = objectOf(schema, real, pathNames, plan).map(jsonOf);
  const wildJson: fc.Arbitrary<Sent> = fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: json },
        { weight: 2, arbitrary: BODIES },
        { weight: 1, arbitrary: deep.map((d) => d.json()) },
        { weight: 1, arbitrary: fc.constant(JSON.stringify({ padding: 'x'.repeat(1_100_000) })) },
      ),
      fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 3, arbitrary: CONTENT_TYPES }),
      fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 2, arbitrary: ENCODINGS }),
    )
    .map(([text, type, encoding]) => {
      let bytes = Buffer.from(text, 'utf8');
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      if (encoding === 'gzip') bytes = gzipSync(bytes);
      if (encoding) headers['content-encoding'] = encoding.replace('-plain', '');
      return { headers, ...(text === '' && !type ? {} : { body: bytes }) };
    });
  const bytes: fc.Arbitrary<Sent> = fc
    .tuple(fc.uint8Array({ maxLength: 4096 }), fc.constantFrom(undefined, 'text/plain', 'application/json', 'image/png; x=y', '\u00ff/\u00ff', 'a'.repeat(300)))
    .map(([data, type]) => ({ headers: type ? { 'content-type': type } : ({} as Record<string, string>), body: Buffer.from(data) }));
  // A form (POST /oauth/token): its fields, given, missing, repeated, with the exact values or hostile ones.
  const FORM_FIELDS = ['grant_type', 'subject_token', 'subject_token_type', 'federation_policy_id', 'requested_token_type', 'scope'];
  const formValue = fc.oneof(
    fc.constantFrom(
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:token-type:jwt',
      'urn:ietf:params:oauth:token-type:access_token',
      'inference',
      'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      'eyJhbGciOiJFUzI1NiJ9.e30.AAAA',
      randomUUID(),
      '%00',
      '%zz',
      '',
    ),
    fc.string({ maxLength: 40 }),
  );
  const form: fc.Arbitrary<Sent> = fc
    .tuple(
      fc.array(fc.tuple(fc.constantFrom(...FORM_FIELDS, 'x'), formValue), { maxLength: 8 }),
      fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'text/plain', 'application/json'),
    )
    .map(([pairs, type]) => ({
      headers: { 'content-type': type },
      body: Buffer.from(pairs.map(([name, value]) => `${name}=${value.startsWith('%') ? value : encodeURIComponent(value)}`).join('&')),
    }));
  const body: fc.Arbitrary<Sent> =
    op.body === 'form'
      ? fc.oneof({ weight: 6, arbitrary: form }, { weight: 1, arbitrary: bytes }, { weight: 1, arbitrary: wildJson })
      : op.body === 'bytes'
        ? bytes
        : op.body === 'multipart'
          ? formed
            ? multipartBody(true)
            : fc.oneof({ weight: 6, arbitrary: multipartBody(false) }, { weight: 1, arbitrary: bytes }, { weight: 1, arbitrary: wildJson })
          : op.body === 'json'
            ? formed
              ? json.map((text) => ({ headers: { 'content-type': 'application/json' }, body: Buffer.from(text) }))
              : wildJson
            : formed
              ? fc.constant({ headers: {} })
              : // Operations without a body sometimes get one anyway (to be ignored).
                fc.oneof({ weight: 4, arbitrary: fc.constant({ headers: {} }) }, { weight: 1, arbitrary: wildJson });

  return fc.tuple(path, query, key, body).map(([p, q, k, b]) => {
    const headers: Record<string, string> = { ...b.headers };
    if (k !== null) headers.authorization = k.startsWith('Bearer') || k.startsWith('Basic') ? k : `Bearer ${k}`;
    const request: HostileRequest = { method: op.method, path: `${p}${q}`, headers, ...(b.body ? { body: b.body } : {}) };
    return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
  });
}

interface Answer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

/** Sends exactly this request (node:http: no path normalisation, any header), and reads the whole answer. */
function send(request: HostileRequest): Promise<Answer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: request.method,
        path: request.path,
        headers: { ...request.headers, ...(request.body ? { 'content-length': String(request.body.length) } : {}) },
        agent,
        timeout: scaled(30_000),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${scaled(30_000) / 1000} s`)));
    req.on('error', reject);
    req.end(request.body);
  });
}

/** What the server logged about a request that it should never have to: a failure, or a value a schema let through to the database. */
const ALARMS = new Set(['internal error', 'the database refused a value the caller sent']);

/** The contract for one answer (and what the server logged while it answered). */
function check(op: OperationEntry, answer: Answer, logged: Record<string, unknown>[]): void {
  const text = answer.body.toString('utf8');
  const where = `${op.method} ${op.path} answered ${answer.status}: ${text.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  // Refused by a schema before any query, never by the database.
  expect(
    logged.filter((entry) => ALARMS.has(String(entry.msg))).map((entry) => JSON.stringify(entry).slice(0, 500)),
    where,
  ).toEqual([]);
  if (answer.status < 400) {
    expect(answer.status, where).toBeGreaterThanOrEqual(200);
    return;
  }
  expect(Object.keys(op.statuses).map(Number), `${where} (not a status the operation declares)`).toContain(answer.status);
  expect(answer.contentType, where).toMatch(/^application\/json/);
  // 431 is Node's, before any operation runs: the envelope, whatever the operation's own error body.
  if (op.errorBody === 'oauth' && answer.status !== 431) {
    const body = OAuthErrorBodySchema.strict().parse(JSON.parse(text));
    expect(OAUTH_ERRORS, where).toContain(body.error);
    return;
  }
  const envelope = ErrorEnvelopeSchema.strict().parse(JSON.parse(text));
  expect(envelope.error.code, where).toBe(answer.status);
  const message = ERROR_MESSAGES[answer.status as ErrorStatus];
  if (answer.status === 402) expect(envelope.error.message.startsWith(message), where).toBe(true);
  // A tenant key on a platform operation: the platform plane's own 403 text (access/rules.ts).
  else if (answer.status === 403) expect([message, PLATFORM_ONLY_MESSAGE], where).toContain(envelope.error.message);
  else expect(envelope.error.message, where).toBe(message);
}

/** RFC 6749 §5.2's error codes (and RFC 8693's use of them) that POST /oauth/token answers. */
const OAUTH_ERRORS = ['invalid_request', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope', 'server_error', 'temporarily_unavailable'];

const operations = restOperations(appRouter, BYTE_ROUTE_MOUNTS);

describe('every REST operation, with random and hostile requests', () => {
  it("covers the spec's 21 operations and the sandbox writer (and whatever else is declared)", () => {
    const driven = operations.map((op) => `${op.method} ${op.path.replace('/api/v1', '')}`);
    expect(driven).toEqual(
      expect.arrayContaining([
        'POST /containers/{container_id}/files/{file_id}/promote',
        'GET /key',
        'POST /workspaces/{id}/members/add',
        'POST /generation/feedback',
        'PATCH /scim/group-mappings/{id}',
        'GET /model/{author}/{slug}',
        'GET /generation',
        'GET /generation/content',
        'GET /containers/{container_id}/files/{file_id}/content',
        'GET /videos/{jobId}/content',
        'GET /organization/members',
        'GET /workspaces/{id}/budgets/{interval}',
        'GET /byok/{id}',
        'GET /workspaces/{id}/budgets',
        'GET /analytics/meta',
        'GET /embeddings/models',
        'GET /presets/{slug}/versions',
        'POST /presets/{slug}/chat/completions',
        'POST /presets/{slug}/messages',
        'POST /presets/{slug}/responses',
        'GET /workspaces/{id}/members',
        'GET /guardrails/{id}/assignments/keys',
        'GET /guardrails',
        'GET /guardrails/{id}/assignments/members',
        'PUT /internal/containers/{container_id}/files/{file_id}',
        'POST /files',
      ]),
    );
  });

  it.each(operations.map((op, index) => [`${op.method} ${op.path}`, op, index] as const))(
    '%s: never a 5xx; errors are the envelope with a declared status',
    async (_name, op, index) => {
      const ids = [world.generationId, world.guardrailId, world.otherGuardrailId, world.byokId, world.scimMappingId, world.destinationId];
      const workspaces = ['default', 'second', world.workspaceId, world.secondWorkspaceId, world.other.workspaceId];
      const named: Record<string, string[]> = {
        id: [...workspaces, ...ids],
        workspace_id: workspaces,
        container_id: [world.containerId],
        file_id: [world.fileId],
        jobId: [world.videoJobId],
        generation_id: [world.generationId],
        organization_id: [server.organizationId, world.other.organizationId],
        user_ids: [world.userIdNotInWorkspace, world.other.userId],
        author: ['openai', 'meta-llama'],
        slug: [world.presetSlug, 'gpt-4o', 'gpt-oss-20b:free', 'GPT-4O'],
        index: ['0', '1'],
      };
      const real: RealValues = { ...named, any: [...new Set(Object.values(named).flat())] };
      const keys = { management: server.managementKey, regular: world.regularKey, platform: server.platformKey, foreign: world.other.managementKey };
      const seed = SEED + index;
      try {
        await fc.assert(
          fc.asyncProperty(requestOf(op, real, keys), async (request) => {
            const before = server.logs.length;
            const answer = await send(request);
            check(op, answer, server.logs.slice(before));
          }),
          { seed, numRuns: RUNS, endOnFailure: true },
        );
      } catch (error) {
        const cause = (error as Error).cause;
        const why = cause instanceof Error ? `\n${cause.message}` : '';
        throw new Error(`${(error as Error).message}${why}\n(reproduce: HOSTILE_SEED=${SEED} HOSTILE_RUNS=${RUNS}; this operation's seed is ${seed})`);
      }
    },
  );
});
