// A session as the answers give it (POST /session/sign-in, sessions.current).
import type { CurrentSession, Session } from '@switchyard/schema';
import type { Actor } from '../../access/callers.js';
import type { SessionRef } from '../../access/sessions.js';
import { tenantData } from '../../access/tenancy.js';

/** A session as its answers give it. */
export function answerOf(actor: Actor, ref: SessionRef): Session {
  return {
    id: ref.id,
    ...tenantData(actor),
    user_id: actor.userId,
    method: ref.method,
    key_hash: ref.method === 'key' ? actor.key.hash : null,
    role: ref.role ?? null,
    created_at: ref.createdAt.toISOString(),
    idle_expires_at: ref.idleExpiresAt.toISOString(),
    expires_at: ref.expiresAt.toISOString(),
    csrf_token: ref.csrfToken,
  };
}

/** Who is calling: the organization, the person, and the session the call was made with (null for a key). */
export function currentSession(actor: Actor): CurrentSession {
  return {
    ...tenantData(actor),
    user_id: actor.userId,
    session: actor.via === 'session' && actor.session ? answerOf(actor, actor.session) : null,
  };
}
