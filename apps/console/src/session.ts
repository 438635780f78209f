// Signing in and the session's client. The management key is sent once, to POST /session/sign-in,
// and dropped: the browser keeps only the HttpOnly session cookie (which no script can read) and the
// session's CSRF token, in memory. A reloaded page gets the token again from sessions.current (a
// query: it needs no token), so the token is never written to storage.
import { createSwitchyardClient, type SwitchyardClient, SwitchyardError } from '@switchyard/client';

export interface Session {
  client: SwitchyardClient;
  organizationId: string;
  /** The masked key the session was signed in with, for the header. */
  keyHash: string | null;
  /**
   * An identity provider's session: its person's organization role, which decides the views shown
   * (the server refuses the rest anyway). Null for a key-made session, which holds its key's scopes.
   */
  role: 'org:admin' | 'org:member' | null;
}

const origin = () => window.location.origin;

function sessionFor(csrfToken: string, organizationId: string, keyHash: string | null, role: Session['role']): Session {
  return { client: createSwitchyardClient({ url: origin(), session: { csrfToken } }), organizationId, keyHash, role };
}

/** The session this browser already has (its cookie), or null when it has none that the server accepts. */
export async function resume(): Promise<Session | null> {
  const anonymous = createSwitchyardClient({ url: origin(), session: {} });
  try {
    const current = await anonymous.sessions.current.query();
    if (!current.session) return null;
    return sessionFor(current.session.csrf_token, current.organization_id, current.session.key_hash ?? null, current.session.role ?? null);
  } catch (error) {
    if (error instanceof SwitchyardError && error.status === 401) return null;
    throw error;
  }
}

/** One refused field of an input, as the server names it (its path, dotted) and says why. */
export interface FieldIssue {
  path: string;
  message: string;
}

export interface ServerError {
  message: string;
  reason?: string;
  /** A refused input's fields (error.metadata.issues): shown next to the fields they name. */
  issues?: FieldIssue[];
}

interface SignInAnswer {
  data?: { csrf_token: string; organization_id: string; key_hash: string | null; role?: Session['role'] };
  error?: { code: number; message: string; metadata?: { reason?: unknown } };
}

/** Exchanges a management key for a session; the key goes no further than this request. */
export async function signIn(key: string): Promise<Session | ServerError> {
  let res: Response;
  try {
    res = await fetch(`${origin()}/session/sign-in`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    return { message: 'The server did not answer.' };
  }
  const body = (await res.json().catch(() => null)) as SignInAnswer | null;
  if (res.ok && body?.data) return sessionFor(body.data.csrf_token, body.data.organization_id, body.data.key_hash, body.data.role ?? null);
  return errorOf(body?.error?.message ?? res.statusText, body?.error?.metadata?.reason);
}

function errorOf(message: string, reason: unknown, issues?: unknown): ServerError {
  const error: ServerError = typeof reason === 'string' ? { message, reason } : { message };
  if (Array.isArray(issues)) {
    const fields = issues.filter((i): i is FieldIssue => typeof i === 'object' && i !== null && typeof i.path === 'string' && typeof i.message === 'string');
    if (fields.length > 0) error.issues = fields;
  }
  return error;
}

/** What a failed call shows: the server's message, and its reason when it gives one. */
export function describeError(error: unknown): ServerError {
  if (error instanceof SwitchyardError) return errorOf(error.message, error.metadata?.reason, error.metadata?.issues);
  return { message: error instanceof Error ? error.message : String(error) };
}
