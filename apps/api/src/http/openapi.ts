import { ERROR_MESSAGES, ErrorEnvelopeSchema, type ErrorStatus } from '@switchyard/schema';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { InsufficientCredits } from '../errors.js';
import { ADD_CREDITS_URL } from '../modules/generations/credits.service.js';
import type { AppRouter } from '../router.js';
import { restOperations } from './operations.js';
import type { Statuses } from './statuses.js';

const ERROR_ENVELOPE = 'ErrorEnvelope';

/** The message an answer with this status carries (402's adds the link to add credits). */
function messageOf(status: ErrorStatus): string {
  return status === 402 ? new InsufficientCredits(ADD_CREDITS_URL).publicMessage! : ERROR_MESSAGES[status];
}

/** Each declared status, answered with the spec's envelope (not trpc-to-openapi's own error body). */
function errorResponses(statuses: Statuses) {
  return Object.fromEntries(
    Object.entries(statuses).map(([key, why]) => {
      const status = Number(key) as ErrorStatus;
      return [
        key,
        {
          description: why,
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${ERROR_ENVELOPE}` },
              example: { error: { code: status, message: messageOf(status) } },
            },
          },
        },
      ];
    }),
  );
}

/**
 * The OpenAPI document, generated once from the router's procedures. Every operation lists exactly
 * the error statuses it declares (http/statuses.ts), each with the error envelope's schema.
 */
export function openApiDocument(router: AppRouter, baseUrl: string) {
  const document = generateOpenApiDocument(router, {
    title: 'Switchyard management and catalog API',
    version: '1.0.0',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    defs: { [ERROR_ENVELOPE]: ErrorEnvelopeSchema },
  });
  const declared = new Map(restOperations(router).map((op) => [`${op.method.toLowerCase()} ${op.path}`, op.statuses]));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, { responses?: Record<string, unknown> }>)) {
      const statuses = declared.get(`${method} ${baseUrl}${path}`);
      if (!statuses || !operation.responses) continue;
      const success = Object.fromEntries(Object.entries(operation.responses).filter(([status]) => status.startsWith('2')));
      operation.responses = { ...success, ...errorResponses(statuses) };
    }
  }
  // trpc-to-openapi's own error bodies are no longer referenced.
  const schemas = document.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  return document;
}
