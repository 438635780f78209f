// The application's one list of modules, in the order the app router lists their routers (a module
// that only runs something, with none, comes last). The merged router (router.ts), the app's byte-route
// mounts (app.ts), the OpenAPI document, the tests that must see every route, and the server's start
// and stop (createModules) read it; a new module joins the application here and nowhere else.
import type { Config } from './config.js';
import type { Resources } from './lib/resources.js';
import { accountModule } from './modules/account/index.js';
import { analyticsModule } from './modules/analytics/index.js';
import { auditModule } from './modules/audit/index.js';
import { authModule } from './modules/auth/index.js';
import { budgetsModule } from './modules/budgets/index.js';
import { byokModule } from './modules/byok/index.js';
import { destinationsModule } from './modules/destinations/index.js';
import { eventsModule } from './modules/events/index.js';
import { exportModule } from './modules/export/index.js';
import { filesModule } from './modules/files/index.js';
import { generationsModule } from './modules/generations/index.js';
import { guardrailsModule } from './modules/guardrails/index.js';
import { idempotencyModule } from './modules/idempotency/index.js';
import { keysModule } from './modules/keys/index.js';
import type { ByteRouteMount, ModuleInstance, ModuleManifest, ModuleShared } from './modules/manifest.js';
import { deciderModule } from './modules/decider/index.js';
import { modelsModule } from './modules/models/index.js';
import { organizationModule } from './modules/members/index.js';
import { organizationsModule } from './modules/organizations/index.js';
import { presetsModule } from './modules/presets/index.js';
import { routingModule } from './modules/routing/index.js';
import { scimModule } from './modules/scim/index.js';
import { sessionsModule } from './modules/sessions/index.js';
import { settingsModule } from './modules/settings/index.js';
import { videosModule } from './modules/videos/index.js';
import { workspacesModule } from './modules/workspaces/index.js';

export const MODULES = [
  keysModule,
  modelsModule,
  generationsModule,
  organizationModule,
  organizationsModule,
  workspacesModule,
  budgetsModule,
  byokModule,
  guardrailsModule,
  presetsModule,
  scimModule,
  analyticsModule,
  accountModule,
  filesModule,
  videosModule,
  routingModule,
  authModule,
  destinationsModule,
  settingsModule,
  auditModule,
  exportModule,
  sessionsModule,
  eventsModule,
  idempotencyModule,
  deciderModule,
] as const satisfies readonly ModuleManifest[];

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every module's routers in one record, as the app router takes them. */
export type ModuleRouters = Intersection<(typeof MODULES)[number]['routers']>;

export const moduleRouters = (): ModuleRouters => Object.assign({}, ...MODULES.map((m) => m.routers)) as ModuleRouters;

type ProvidedBy<M> = M extends { create(...args: never[]): infer I } ? (Awaited<I> extends { deps: infer D } ? D : never) : never;

/** What the modules' `create` functions add to the app's dependencies, together. */
export type ModuleDeps = Intersection<ProvidedBy<(typeof MODULES)[number]>>;

/**
 * Builds every module that runs something, in the list's order, registering each one's stop with
 * `resources` (so that they stop in reverse, after the server's drain, also when a later step of
 * the start fails). Answers what they add to the app's dependencies, a start for their background
 * work once the server listens (and again once the database is back), and a pause for it while the
 * database is gone, and an end for the streams they hold open, as the server begins to close.
 */
export async function createModules(
  config: Config,
  shared: ModuleShared,
  resources: Resources,
): Promise<{ deps: ModuleDeps; start(): void; pause(): Promise<void>; endStreams(): void }> {
  const deps: Record<string, unknown> = {};
  const instances: ModuleInstance[] = [];
  for (const module of MODULES as readonly ModuleManifest[]) {
    if (!module.create) continue;
    const instance = await module.create(config, shared);
    if (instance.stop) resources.defer(() => instance.stop?.());
    instances.push(instance);
    Object.assign(deps, instance.deps);
  }
  return {
    deps: deps as ModuleDeps,
    start: () => {
      for (const instance of instances) instance.start?.();
    },
    pause: async () => {
      await Promise.all(instances.map((instance) => instance.pause?.()));
    },
    endStreams: () => {
      for (const instance of instances) instance.endStreams?.();
    },
  };
}

/**
 * The byte-stream routes of every module, one group per mount prefix (one express router each), in
 * the modules' order: the app mounts these, and the tests that must see every route read them.
 */
export const BYTE_ROUTE_MOUNTS: readonly ByteRouteMount[] = (() => {
  const byPrefix = new Map<string, ByteRouteMount['routes'][number][]>();
  for (const mount of MODULES.flatMap((m): readonly ByteRouteMount[] => ('byteRoutes' in m ? m.byteRoutes : []))) {
    byPrefix.set(mount.prefix, [...(byPrefix.get(mount.prefix) ?? []), ...mount.routes]);
  }
  return [...byPrefix].map(([prefix, routes]) => ({ prefix, routes }));
})();
