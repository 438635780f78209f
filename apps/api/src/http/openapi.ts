import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { AppRouter } from '../router.js';

/** The OpenAPI document, generated once from the router's procedures. */
export function openApiDocument(router: AppRouter, baseUrl: string) {
  return generateOpenApiDocument(router, {
    title: 'Switchyard management and catalog API',
    version: '1.0.0',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
  });
}
