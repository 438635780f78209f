// The router's procedures, listed through what tRPC makes public: a router built by router({...})
// carries its record of procedures and sub-records as its own properties (`appRouter.keys.list`),
// and each procedure its meta (`procedure.meta`, tRPC 11.2's "Expose meta on procedures").
import type { AnyProcedure, AnyRouter } from '@trpc/server';
import type { ProcedureMeta } from './init.js';

/** A router's own members beside its record: its factory of callers and tRPC's definition of it. */
const ROUTER_MEMBERS = new Set(['createCaller', '_def']);

/** Every procedure of `router` by its dotted path (`keys.list`), in the order the routers list them. */
export function proceduresOf(router: AnyRouter): Record<string, AnyProcedure> {
  const procedures: Record<string, AnyProcedure> = {};
  const walk = (record: object, prefix: string) => {
    for (const [key, value] of Object.entries(record)) {
      if (prefix === '' && ROUTER_MEMBERS.has(key)) continue;
      if (typeof value === 'function') procedures[`${prefix}${key}`] = value as AnyProcedure;
      else if (value !== null && typeof value === 'object') walk(value, `${prefix}${key}.`);
    }
  };
  walk(router, '');
  return procedures;
}

/** A procedure's meta (undefined: none given). */
export const metaOf = (procedure: AnyProcedure): ProcedureMeta | undefined => procedure.meta as ProcedureMeta | undefined;
