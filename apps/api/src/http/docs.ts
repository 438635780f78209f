// GET /docs: the API reference, rendered in the browser by Redoc from the live OpenAPI document
// (GET /api/v1/openapi.json). Redoc's standalone bundle is served from the installed `redoc`
// package, so the page needs nothing from the internet (no CDN, no web fonts).
import { createRequire } from 'node:module';
import { Router } from 'express';
import { API_PREFIX } from './paths.js';

export const DOCS_PATH = '/docs';
const BUNDLE_PATH = `${DOCS_PATH}/redoc.standalone.js`;

/** Redoc's self-contained browser bundle, from node_modules. */
export const REDOC_BUNDLE_FILE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Switchyard API reference</title>
  <style>body { margin: 0; }</style>
</head>
<body>
  <redoc spec-url="${API_PREFIX}/openapi.json" expand-responses="200,206" path-in-middle-panel sort-tags-alphabetically></redoc>
  <script src="${BUNDLE_PATH}"></script>
</body>
</html>
`;

export function docsRoutes(): Router {
  const routes = Router();
  routes.get(DOCS_PATH, (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-cache').send(PAGE);
  });
  routes.get(BUNDLE_PATH, (_req, res, next) => {
    res.sendFile(REDOC_BUNDLE_FILE, { headers: { 'Cache-Control': 'public, max-age=3600' } }, (error) => {
      if (error && !res.headersSent) next(error);
    });
  });
  return routes;
}
