// A module's one face: what it offers the application. Each module's index.ts exports its
// manifest, and the composition root lists them (src/modules.ts): the merged router, the app's
// byte-route mounts, the OpenAPI document and the tests that must see every route read that list,
// never the modules' own files. A module names here what it offers; what it needs, its caches,
// workers and jobs join the same face as they move out of the composition root.
import type { AnyRouter } from '@trpc/server';
import type { RawRoute } from '../raw-routes/route.js';

/** A group of byte-stream routes (RawRoute: contract and handler) and where the app mounts it. */
export interface ByteRouteMount {
  prefix: string;
  routes: readonly RawRoute[];
}

export interface ModuleManifest {
  /** The module's folder under src/modules/. */
  name: string;
  /** Its tRPC routers, under the names the app router gives them (most modules have one). */
  routers: Readonly<Record<string, AnyRouter>>;
  /** Its byte-stream routes, if any. */
  byteRoutes?: readonly ByteRouteMount[];
}

/** A manifest as written, its routers' types kept (the app router's type is their intersection). */
export const defineModule = <const M extends ModuleManifest>(manifest: M): M => manifest;
