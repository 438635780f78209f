// The answering half of the status declarations (@switchyard/schema's statuses.ts holds what each
// operation declares): how an error is answered by an operation that does not declare its status.
// The REST adapter (http/rest.ts) and the raw routes that answer their own errors (POST /files) apply it.
import { ERROR_MESSAGES, type ErrorStatus, type Statuses } from '@switchyard/schema';
import type { HttpError } from '../lib/errors.js';

/**
 * When an operation does not declare the status an error naturally has, the declared one a client
 * handles best: a body over the limit is input the operation will not take (413 -> 400), input
 * that can name nothing, or a resource the key may not see, is a resource not found (400, 403 -> 404),
 * and where 404 is not listed, a parameter that names nothing (a workspace_id) is bad input (404 -> 400).
 */
const SUBSTITUTES: Partial<Record<ErrorStatus, ErrorStatus>> = { 413: 400, 400: 404, 403: 404, 404: 400 };

/** The error as the operation answers it: its own status if declared, else its declared substitute. */
export function declaredAnswer(statuses: Statuses, error: HttpError): HttpError {
  if (statuses[error.status] !== undefined) return error;
  const substitute = SUBSTITUTES[error.status];
  if (substitute === undefined || statuses[substitute] === undefined) return error;
  return { ...error, status: substitute, message: ERROR_MESSAGES[substitute] };
}
