// GET /docs: the API reference, rendered in the browser by Scalar from the live OpenAPI document
// (GET /api/v1/openapi.json). Scalar's standalone browser bundle is served from the installed
// @scalar/api-reference package, and its web fonts are off, so the page needs nothing from the
// internet (no CDN).
import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';
import { API_PREFIX } from '@switchyard/schema';

export const DOCS_PATH = '/docs';
const BUNDLE_PATH = `${DOCS_PATH}/scalar.js`;

/** Scalar's self-contained browser bundle, from node_modules (the package exports only its modules). */
export const SCALAR_BUNDLE_FILE = path.join(path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/**
 * Scalar's configuration: the live document, every tag open, and nothing that reaches outside the
 * server (no web fonts, no telemetry, no AI agent, no developer toolbar).
 */
const CONFIGURATION = {
  url: `${API_PREFIX}/openapi.json`,
  defaultOpenAllTags: true,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Switchyard API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <script id="api-reference" data-configuration='${JSON.stringify(CONFIGURATION)}'></script>
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
    // dotfiles: the path runs through node_modules/.pnpm.
    res.sendFile(SCALAR_BUNDLE_FILE, { dotfiles: 'allow', headers: { 'Cache-Control': 'public, max-age=3600' } }, (error) => {
      if (error && !res.headersSent) next(error);
    });
  });
  return routes;
}
