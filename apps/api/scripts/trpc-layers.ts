// `pnpm --filter @switchyard/api trpc-layers`: what one tRPC middleware layer costs, through tRPC's
// public API alone (docs/decisions/0036-public-trpc-api-only.md). tRPC copies a call's options at
// every layer with its build's object-spread helper, which defines each property in turn; this
// measures a procedure call with one to four layers, called directly by a caller of
// createCallerFactory, so that the cost per layer can be compared across tRPC versions.
import { initTRPC } from '@trpc/server';
import { z } from 'zod';

const t = initTRPC.context<{ actor?: number }>().create();
const answer = z.object({ data: z.object({ id: z.string(), usage: z.number() }) });
const resolve = () => ({ data: { id: 'k', usage: 1 } });
const own = t.procedure.use(({ ctx, next }) => {
  ctx.actor = 1;
  return next();
});

// Layers: the resolver, then the output's parse, then an input's, then a middleware of our own.
const router = t.router({
  one: t.procedure.query(resolve),
  two: t.procedure.output(answer).query(resolve),
  three: t.procedure.input(z.void()).output(answer).query(resolve),
  four: own.input(z.void()).output(answer).query(resolve),
});
const createCaller = t.createCallerFactory(router);

async function perCall(name: 'one' | 'two' | 'three' | 'four', calls: number): Promise<number> {
  const call = () => createCaller({})[name]();
  for (let i = 0; i < calls / 10; i++) await call();
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await call();
  return Number(process.hrtime.bigint() - start) / 1000 / calls;
}

const CALLS = 200_000;
for (let round = 1; round <= 3; round++) {
  const figures: string[] = [];
  for (const name of ['one', 'two', 'three', 'four'] as const) figures.push(`${name} layer(s) ${(await perCall(name, CALLS)).toFixed(2)} µs`);
  console.log(`round ${round}: ${figures.join(', ')} per call`);
}
