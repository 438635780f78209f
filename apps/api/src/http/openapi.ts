import { forEachOpenApiProcedure, generateOpenApiDocument } from 'trpc-to-openapi';
import type { AppRouter } from '../router.js';
import type { ProcedureMeta } from '../trpc/init.js';

/**
 * The OpenAPI document, generated once from the router's procedures. trpc-to-openapi documents every
 * success as 200; an operation whose meta.successStatus is 201 (the creates) is documented as 201,
 * the one status its clients accept.
 */
export function openApiDocument(router: AppRouter, baseUrl: string) {
  const doc = generateOpenApiDocument(router, {
    title: 'Switchyard management and catalog API',
    version: '1.0.0',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });
  forEachOpenApiProcedure(router._def.procedures, ({ meta }) => {
    const status = (meta as ProcedureMeta).successStatus;
    if (status === undefined || status === 200) return;
    const operation = doc.paths?.[meta.openapi.path]?.[meta.openapi.method.toLowerCase() as 'post'];
    if (!operation?.responses?.['200']) return;
    const { '200': success, ...others } = operation.responses;
    operation.responses = { [String(status)]: success, ...others };
  });
  return doc;
}
