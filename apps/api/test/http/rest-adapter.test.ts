// The REST adapter with a router of its own: path parameters are percent-decoded once, for REST
// only, and a %2F stays inside its segment; paths match as trpc-to-openapi's do. And the app's
// operations: none shadows another, or a byte-stream route mounted after them.
import type { Server } from 'node:http';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_PREFIX, ERROR_MESSAGES } from '@switchyard/schema';
import { getPathParameters, getPathRegExp, normalizePath } from 'trpc-to-openapi';
import { BYTE_ROUTE_MOUNTS } from '../../src/modules.js';
import { appRouter } from '../../src/router.js';
import { metaOf, proceduresOf } from '../../src/trpc/procedures.js';
import { createCallerFactory, publicProcedure, router } from '../../src/trpc/init.js';
import { restHandler } from '../../src/http/rest.js';
import type { Context } from '../../src/trpc/context.js';

const echoRouter = router({
  echo: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/echo/{a}/{b}' } })
    .input(z.object({ a: z.string(), b: z.string(), q: z.string().optional() }))
    .output(z.object({ a: z.string(), b: z.string(), q: z.string().optional() }))
    .query(({ input }) => input),
  touch: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/touch/{id}' } })
    .input(z.object({ id: z.string(), note: z.string().optional(), n: z.number().optional(), flag: z.boolean().optional() }))
    .output(z.object({ id: z.string(), note: z.string().nullable(), n: z.number().optional(), flag: z.boolean().optional() }))
    .mutation(({ input }) => ({ id: input.id, note: input.note ?? null, n: input.n, flag: input.flag })),
  count: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/count' } })
    .input(z.object({ n: z.number().int(), tags: z.array(z.string()).optional(), all: z.boolean().optional() }))
    .output(z.object({ n: z.number(), tags: z.array(z.string()).optional(), all: z.boolean().optional() }))
    .query(({ input }) => input),
});

let server: Server;
let base: string;
beforeAll(async () => {
  const deps = {
    db: undefined as never,
    secrets: undefined as never,
    media: undefined as never,
    keys: undefined as never,
    catalog: undefined as never,
    recorder: undefined as never,
    memberOrder: undefined as never,
    guardrails: undefined as never,
    usage: undefined as never,
    workspaceRouting: undefined as never,
    spend: undefined as never,
    reservations: undefined as never,
    limits: undefined as never,
    freeQuota: undefined as never,
    apiRateLimits: undefined as never,
    analyticsWorkers: undefined as never,
    reservationTtlMs: 0,
    deciderChanges: undefined as never,
    deciderHeartbeatMs: 0,
    sessionLifetimes: { idleMs: 60_000, maxAgeMs: 60_000 },
    refusalEvents: undefined as never,
    byokReveals: undefined as never,
    metrics: undefined as never,
    identity: undefined as never,
    accessTokens: undefined as never,
    jobs: undefined as never,
    logger: pino({ level: 'silent' }),
    now: () => new Date(),
  };
  const app = express()
    .use('/api/v1', restHandler(echoRouter, deps))
    .use('/trpc', createExpressMiddleware({ router: echoRouter, createContext: () => ({}) as Context }));
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('REST path parameters', () => {
  it('are percent-decoded, and %2F does not split a segment', async () => {
    const res = await fetch(`${base}/echo/gpt-4%3Afree/a%2Fb%20c?q=x%3Ay`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ a: 'gpt-4:free', b: 'a/b c', q: 'x:y' });
  });

  it('with a malformed encoding are a 400 with the envelope', async () => {
    const res = await fetch(`${base}/echo/%E0%A4%A/b`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 400, message: 'Invalid request parameters' } });
  });

  it('are left alone for tRPC callers, whose input is not encoded', async () => {
    const caller = createCallerFactory(echoRouter)({} as Context);
    expect(await caller.echo({ a: '100%25', b: 'x' })).toEqual({ a: '100%25', b: 'x' });
  });
});

describe('REST bodies', () => {
  it('a POST with no body and no Content-Type is an empty JSON object', async () => {
    const res = await fetch(`${base}/touch/x1`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'x1', note: null });
  });

  it('a JSON body is read, with or without a charset', async () => {
    const res = await fetch(`${base}/touch/x2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ note: 'hi' }),
    });
    expect(await res.json()).toEqual({ id: 'x2', note: 'hi' });
  });

  it('a body that is not JSON is a 400 with the envelope; so is a body without a Content-Type', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const res = await fetch(`${base}/touch/x3`, { method: 'POST', headers, body: new TextEncoder().encode('note=hi') });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 400, message: ERROR_MESSAGES[400] } });
    }
  });
});

describe('REST JSON bodies', () => {
  it('keep their own types: a string where a number or boolean belongs is a 400, not converted', async () => {
    const post = (body: unknown) => fetch(`${base}/touch/x1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await (await post({ n: 3, flag: false })).json()).toEqual({ id: 'x1', note: null, n: 3, flag: false });
    for (const body of [{ n: '3' }, { flag: 'false' }, { flag: 'true' }]) expect((await post(body)).status, JSON.stringify(body)).toBe(400);
  });
});

describe('REST query strings', () => {
  it('coerce to the schema (numbers), and a parameter given twice is an array', async () => {
    const ok = await fetch(`${base}/count?n=3&tags=a`);
    expect(await ok.json()).toEqual({ n: 3, tags: ['a'] });
    expect(await (await fetch(`${base}/count?n=4&tags=a&tags=b`)).json()).toEqual({ n: 4, tags: ['a', 'b'] });
    const bad = await fetch(`${base}/count?n=three`);
    expect(bad.status).toBe(400);
  });

  it('take a boolean as true or false only ("false" is not true), anything else is a 400', async () => {
    expect(await (await fetch(`${base}/count?n=1&all=false`)).json()).toEqual({ n: 1, all: false });
    expect(await (await fetch(`${base}/count?n=1&all=true`)).json()).toEqual({ n: 1, all: true });
    for (const text of ['0', 'yes', 'False', '']) {
      const res = await fetch(`${base}/count?n=1&all=${text}`);
      // An empty parameter is no parameter (queryOf skips it).
      if (text === '') expect(await res.json()).toEqual({ n: 1 });
      else expect(res.status, text).toBe(400);
    }
  });

  it('are coerced for REST only: the shared input schema still refuses "3" from tRPC callers', async () => {
    expect(await (await fetch(`${base}/count?n=3`)).json()).toEqual({ n: 3 });
    const overHttp = await fetch(`${base.replace('/api/v1', '/trpc')}/count?input=${encodeURIComponent(JSON.stringify({ n: '3' }))}`);
    expect(overHttp.status).toBe(400);
    await expect(createCallerFactory(echoRouter)({} as Context).count({ n: '3' as unknown as number })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await createCallerFactory(echoRouter)({} as Context).count({ n: 3 })).toEqual({ n: 3 });
  });

  it('unknown paths and methods fall through to the next handler', async () => {
    expect((await fetch(`${base}/count`, { method: 'DELETE' })).status).toBe(404);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
  });
});

describe('REST routing', () => {
  it('matches paths regardless of case, with or without a trailing slash, as trpc-to-openapi does', async () => {
    expect(await (await fetch(`${base}/COUNT/?n=2`)).json()).toEqual({ n: 2 });
    expect(await (await fetch(`${base}/Echo/x/y`)).json()).toEqual({ a: 'x', b: 'y' });
  });
});

describe("the app's REST operations", () => {
  const operations = Object.values(proceduresOf(appRouter)).flatMap((procedure) => {
    const openapi = metaOf(procedure)?.openapi;
    return openapi ? [{ method: openapi.method, template: normalizePath(openapi.path) }] : [];
  });

  it('with path parameters match no path of one without that the routers list after them', () => {
    // The adapter looks a path without parameters up first; the routers' order (which trpc-to-openapi's
    // adapter follows) would have given it to an earlier template that matches it.
    const matches = operations.flatMap((exact, at) =>
      getPathParameters(exact.template).length > 0
        ? []
        : operations
            .slice(0, at)
            .filter(({ method, template }) => method === exact.method && getPathParameters(template).length > 0 && getPathRegExp(template).test(exact.template))
            .map(({ template }) => `${exact.method} ${template}, listed first, matches ${exact.template}`),
    );
    expect(matches).toEqual([]);
  });

  it('match no byte-stream route of their prefix, which the app mounts after them', () => {
    const streams = BYTE_ROUTE_MOUNTS.filter(({ prefix }) => prefix === API_PREFIX).flatMap(({ routes }) => routes);
    expect(streams.length).toBeGreaterThan(0);
    const matches = streams.flatMap((stream) => {
      const path = stream.path.replace(/:(\w+)/g, 'x1');
      return operations
        .filter(({ method, template }) => method === stream.method.toUpperCase() && getPathRegExp(template).test(path))
        .map(({ template }) => `${stream.method.toUpperCase()} ${stream.path} is matched by ${template}`);
    });
    expect(matches).toEqual([]);
  });
});
