import type { ServerError } from './session.js';

/** A failed call's message (the server's, with its reason), announced to screen readers. */
export function ErrorMessage({ error }: { error: ServerError }) {
  return (
    <p className="error" role="alert">
      {error.message}
      {error.reason ? `: ${error.reason}` : ''}
    </p>
  );
}
