// A module's one face: what it offers the application. Each module's index.ts exports its
// manifest, and the composition root lists them (src/modules.ts): the merged router, the app's
// byte-route mounts, the OpenAPI document and the tests that must see every route read that list,
// never the modules' own files. A module that runs something (a cache, a worker, a flusher, a
// periodic job) builds it in its `create`, from what the composition root shares with every
// module, and says what it adds to the app's dependencies and how it starts and stops; the server
// starts the modules in the list's order and stops them in reverse.
import type { Db } from '@switchyard/db';
import type { AnyRouter } from '@trpc/server';
import type { KeyCache } from '../access/callers.js';
import type { Config } from '../config.js';
import type { DatabaseHealth } from '../health/database-health.js';
import type { JobRunner } from '../jobs/runner.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import type { OrganizationLimitSettings } from '../limits/limit-settings.js';
import type { Limits } from '../limits/limits.js';
import type { RawRoute } from '../raw-routes/route.js';
import type { MediaDeps } from '../storage/media.js';
import type { SecretBox } from '../lib/secret-box.js';

/** A group of byte-stream routes (RawRoute: contract and handler) and where the app mounts it. */
export interface ByteRouteMount {
  prefix: string;
  routes: readonly RawRoute[];
}

/** What the composition root builds before any module, and hands to every module's `create`. */
export interface ModuleShared {
  db: Db;
  /** The database's URL (the embedded one's too), for what opens connections of its own. */
  databaseUrl: string;
  /**
   * Whether the database is there. A background failure goes to its `report` first: a failure that
   * is the database going away is logged once, by it, and needs no line of the module's own.
   */
  databaseHealth: DatabaseHealth;
  /** The clock (tests fix it). */
  now: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** The job runner: a module registers its periodic jobs and job handlers here; the server starts it once every module is built. */
  jobs: JobRunner;
  /** Encrypts secrets at rest. */
  secrets: SecretBox;
  /** Stored bytes and the limits of files and media. */
  media: MediaDeps;
  /** The counter store's limits, and organizations' own limit settings. */
  limits: Limits;
  limitSettings: OrganizationLimitSettings;
  /**
   * Key rows by hash: authentication (access/) reads it on every request, and the modules that
   * disable keys (SCIM, workspaces) forget them in it, so it is the server's, not one module's.
   */
  keys: KeyCache;
}

/** A module's running part, as its `create` returns it. */
export interface ModuleInstance<D extends object = object> {
  /** What it adds to the app's dependencies (the services' `deps`). */
  deps: D;
  /** Starts its background work (a worker, a sweep), once the server listens; again once the database is back after a pause. */
  start?(): void;
  /**
   * Stops that background work while the database is gone (each round would only fail); `start`
   * follows once it is back. Flushers keep what they hold instead, and write it once they can.
   */
  pause?(): Promise<void>;
  /** Stops it for good, after the server has drained its requests: what is pending is written then. */
  stop?(): Promise<void>;
  /** Ends what holds requests open (streams to their subscribers) as the server begins to close, so that they do not hold its drain. */
  endStreams?(): void;
}

export interface ModuleManifest {
  /** The module's folder under src/modules/. */
  name: string;
  /** Its tRPC routers, under the names the app router gives them (most modules have one; one that only runs something, none). */
  routers: Readonly<Record<string, AnyRouter>>;
  /** Its byte-stream routes, if any. */
  byteRoutes?: readonly ByteRouteMount[];
  /** Builds what the module runs, if anything. */
  create?(config: Config, shared: ModuleShared): ModuleInstance | Promise<ModuleInstance>;
}

/** A manifest as written, its routers' types kept (the app router's type is their intersection). */
export const defineModule = <const M extends ModuleManifest>(manifest: M): M => manifest;
