import { forEachOpenApiProcedure, generateOpenApiDocument } from 'trpc-to-openapi';
import type { AppRouter } from '../router.js';
import type { ProcedureMeta } from '../trpc/init.js';

/**
 * The OpenAPI document, generated once from the router's procedures. trpc-to-openapi always
 * documents success as 200; an operation whose meta.successStatus is 201 (the creates) gets its
 * success response under 201 instead, as it answers.
 */
export function openApiDocument(router: AppRouter, baseUrl: string) {
  const document = generateOpenApiDocument(router, {
    title: 'Switchyard management and catalog API',
    version: '1.0.0',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });
  forEachOpenApiProcedure(router._def.procedures, ({ meta }) => {
    const { openapi, successStatus } = meta as ProcedureMeta & { openapi: NonNullable<ProcedureMeta['openapi']> };
    if (!successStatus || successStatus === 200) return;
    const method = openapi.method.toLowerCase() as 'post';
    const operation = document.paths?.[openapi.path]?.[method];
    if (!operation?.responses?.['200']) return;
    const { '200': success, ...others } = operation.responses;
    operation.responses = { [String(successStatus)]: success, ...others };
  });
  return document;
}
