import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { AppRouter } from '../router.js';
import type { RawRoute } from './authenticate.js';
import { DOWNLOAD_ROUTES } from './downloads.js';

/** The OpenAPI document, generated once from the router's procedures, plus the byte downloads. */
export function openApiDocument(router: AppRouter, baseUrl: string) {
  const document = generateOpenApiDocument(router, {
    title: 'Switchyard management and catalog API',
    version: '1.0.0',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });
  const paths = (document.paths ??= {}) as Record<string, Record<string, unknown>>;
  for (const route of DOWNLOAD_ROUTES) {
    if (!route.doc) continue;
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method]: rawOperation(route, route.doc) };
  }
  return document;
}

/** The OpenAPI operation of a raw download route: bearer key, path and query parameters, bytes on 200. */
function rawOperation(route: RawRoute, doc: NonNullable<RawRoute['doc']>) {
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const query = (doc.query ?? []).map((q) => ({ name: q.name, in: 'query', required: false, description: q.description, schema: { type: q.type } }));
  return {
    summary: doc.summary,
    description: doc.description,
    tags: doc.tags,
    security: [{ bearerAuth: [] }],
    parameters: [...pathParams, ...query],
    responses: {
      200: { description: 'The bytes', content: { [doc.contentType]: { schema: { type: 'string', format: 'binary' } } } },
      default: { description: 'Error: { "error": { "code": <status>, "message": "..." } }', content: { 'application/json': {} } },
    },
  };
}
