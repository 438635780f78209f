// GET /console: the console for people (apps/console, docs/console.md), a single-page app the server
// serves from the console's build (apps/console/dist). Its hashed files under /console/assets/ are
// served as they are; every other /console path answers index.html, so each view's URL can be
// opened, reloaded and shared. Every answer carries a strict Content-Security-Policy (scripts and
// styles only from this origin, none inline, no framing), since keys' names and whatever else the
// console shows are written by other people.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, Router } from 'express';
import { NotFound, httpErrorOf } from '../lib/errors.js';
import { sendError } from '../raw-routes/send-error.js';

export const CONSOLE_PATH = '/console';

/** Where a deployed folder holds the console's build: its `console/` (docs/deployment.md). */
const DEPLOYED_CONSOLE = fileURLToPath(new URL('../../console/', import.meta.url));

/**
 * The console's build: a deployed folder's `console/` when it has one, else the console package's
 * build beside this package in the repository (apps/console/dist). The console's package depends on
 * @switchyard/client, whose tests depend on this package, so this package cannot depend on the
 * console's in turn (a cycle); `pnpm start` builds both, and the deployment copies the build in.
 */
export const CONSOLE_DIST = existsSync(path.join(DEPLOYED_CONSOLE, 'index.html'))
  ? DEPLOYED_CONSOLE
  : fileURLToPath(new URL('../../../console/dist/', import.meta.url));

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set(CONSOLE_HEADERS);
  next();
};

export function consoleRoutes(dist = CONSOLE_DIST): Router {
  const routes = Router();
  const index = path.join(dist, 'index.html');
  routes.use(CONSOLE_PATH, securityHeaders);
  // Vite names each file after its content: a file once fetched never changes.
  routes.use(
    `${CONSOLE_PATH}/assets`,
    express.static(path.join(dist, 'assets'), { index: false, immutable: true, maxAge: '365d', redirect: false }),
    (_req, res) => sendError(res, httpErrorOf(new NotFound('no such file in the console'))),
  );
  routes.get([CONSOLE_PATH, `${CONSOLE_PATH}/*rest`], (_req, res, next) => {
    if (!existsSync(index)) {
      sendError(res, httpErrorOf(new NotFound('the console is not built: pnpm turbo run build --filter=@switchyard/console')));
      return;
    }
    res.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } }, (error) => {
      if (error && !res.headersSent) next(error);
    });
  });
  return routes;
}
