// A module's one face: what it offers the application. Each module's index.ts exports its
// manifest, and the composition root lists them (src/modules.ts): the merged router, the app's
// byte-route mounts, the OpenAPI document and the tests that must see every route read that list,
// never the modules' own files. A module that runs something (a cache, a worker, a flusher, a
// periodic job) builds it in its `create`, from what the composition root shares with every
// module, and says what it adds to the app's dependencies and how it starts and stops; the server
// starts the modules in the list's order and stops them in reverse.
import type { Db } from '@switchyard/db';
import type { AnyRouter } from '@trpc/server';
import type { Config } from '../config.js';
import type { JobRunner } from '../jobs/runner.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import type { RawRoute } from '../raw-routes/route.js';

/** A group of byte-stream routes (RawRoute: contract and handler) and where the app mounts it. */
export interface ByteRouteMount {
  prefix: string;
  routes: readonly RawRoute[];
}

/** What the composition root builds before any module, and hands to every module's `create`. */
export interface ModuleShared {
  db: Db;
  /** The clock (tests fix it). */
  now: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** The job runner: a module registers its periodic jobs and job handlers here; the server starts it once every module is built. */
  jobs: JobRunner;
}

/** A module's running part, as its `create` returns it. */
export interface ModuleInstance<D extends object = object> {
  /** What it adds to the app's dependencies (the services' `deps`). */
  deps: D;
  /** Starts its background work, once the server listens. */
  start?(): void;
  /** Stops it, after the server has drained its requests: what is pending is written then. */
  stop?(): Promise<void>;
}

export interface ModuleManifest {
  /** The module's folder under src/modules/. */
  name: string;
  /** Its tRPC routers, under the names the app router gives them (most modules have one). */
  routers: Readonly<Record<string, AnyRouter>>;
  /** Its byte-stream routes, if any. */
  byteRoutes?: readonly ByteRouteMount[];
  /** Builds what the module runs, if anything. */
  create?(config: Config, shared: ModuleShared): ModuleInstance | Promise<ModuleInstance>;
}

/** A manifest as written, its routers' types kept (the app router's type is their intersection). */
export const defineModule = <const M extends ModuleManifest>(manifest: M): M => manifest;
