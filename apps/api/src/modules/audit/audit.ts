// The audit log's writer (docs/audit.md, decision 0024): every state-changing
// operation appends one entry in the same transaction as its change, through appendAudit (a Prisma
// transaction's client) or auditInsertSql (a CTE of the change's own statement). Who acted and from
// where is an Audit, made once per request from its context (auditOfTenant, auditOfPlatform).
import type { Db, Prisma } from '@switchyard/db';
import type { AuditActorKind } from '@switchyard/schema';
import type { Actor, PlatformActor } from '../../access/callers.js';
import type { RequestOrigin } from '../../trpc/service-deps.js';

/** Who acted, from where, and when. */
export interface Audit {
  actor: {
    kind: AuditActorKind;
    keyHash: string | null;
    label: string | null;
    userId: string | null;
    organizationId: string | null;
  };
  requestId: string | null;
  clientAddress: string | null;
  /** The change's time (the server's clock, deps.now()). */
  at: Date;
}

/**
 * A tenant key's Audit: a management or regular key, a federated access token acting as one, or a
 * person's session (its user is the person; its key, the key a key-made session was signed in with;
 * an identity provider's session has no key).
 */
export function auditOfTenant(actor: Actor, origin: RequestOrigin): Audit {
  const personSession = actor.session?.method === 'oidc';
  const kind: AuditActorKind =
    actor.via === 'access_token' ? 'access_token' : actor.via === 'session' ? 'session' : actor.key.is_management_key ? 'management_key' : 'regular_key';
  return {
    actor: personSession
      ? { kind, keyHash: null, label: null, userId: actor.userId, organizationId: actor.organizationId }
      : { kind, keyHash: actor.key.hash, label: actor.key.label, userId: actor.userId, organizationId: actor.organizationId },
    requestId: origin.requestId(),
    clientAddress: origin.clientAddress(),
    at: origin.now(),
  };
}

/** A platform key's Audit: it names the platform key by its id and name. */
export function auditOfPlatform(platform: PlatformActor, origin: RequestOrigin): Audit {
  return {
    actor: { kind: 'platform_key', keyHash: platform.keyId, label: platform.name, userId: null, organizationId: null },
    requestId: origin.requestId(),
    clientAddress: origin.clientAddress(),
    at: origin.now(),
  };
}

/** A SCIM token's Audit (a write over /scim/v2): it names the token by its id and masked label. */
export function auditOfScim(token: { tokenId: string; label: string; organizationId: string }, origin: RequestOrigin): Audit {
  return {
    actor: { kind: 'scim_token', keyHash: token.tokenId, label: token.label, userId: null, organizationId: token.organizationId },
    requestId: origin.requestId(),
    clientAddress: origin.clientAddress(),
    at: origin.now(),
  };
}

/** An anonymous PKCE exchange's Audit (its code is its only credential). */
export function auditOfAnonymous(organizationId: string, userId: string | null, origin: RequestOrigin): Audit {
  return {
    actor: { kind: 'pkce', keyHash: null, label: null, userId, organizationId },
    requestId: origin.requestId(),
    clientAddress: origin.clientAddress(),
    at: origin.now(),
  };
}

/** The changed fields: what they were and what they became (either may be absent: a create has no before). */
export interface Changes {
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  [other: string]: unknown;
}

/** What one operation changed. */
export interface AuditRecord {
  /** `<resource>.<verb>`: the procedure's path (docs/audit.md). */
  action: string;
  targetType: string;
  targetId: string | null;
  /** The organization concerned: default the actor's; a platform write names it (null: none, e.g. the catalog). */
  organizationId?: string | null;
  changes?: Changes;
}

type Client = Db | Prisma.TransactionClient;

/**
 * Appends one entry with `client`: a transaction's client, so that the entry commits with the change
 * and rolls back with it.
 */
export async function appendAudit(client: Client, audit: Audit, record: AuditRecord): Promise<void> {
  const organizationId = record.organizationId === undefined ? audit.actor.organizationId : record.organizationId;
  const changes = JSON.stringify(jsonSafe(record.changes ?? {}));
  await client.$executeRaw`
    INSERT INTO audit_log (id, organization_id, actor_kind, actor_key_hash, actor_label, actor_user_id, action, target_type, target_id,
                           changes, request_id, client_address, created_at)
    VALUES (gen_random_uuid(), ${organizationId}, ${audit.actor.kind}, ${audit.actor.keyHash}, ${audit.actor.label}, ${audit.actor.userId},
            ${record.action}, ${record.targetType}, ${record.targetId}, ${changes}::jsonb, ${audit.requestId}, ${audit.clientAddress},
            ${audit.at.toISOString()}::timestamptz)`;
}

/**
 * The values of an audit CTE in a statement of its own (auditInsertSql), by the names of its
 * parameters (`audit_` and the field): spread them into the statement's own values.
 */
export function auditValues(audit: Audit, action: string) {
  const { actor } = audit;
  return {
    audit_actor_kind: actor.kind,
    audit_actor_key_hash: actor.keyHash,
    audit_actor_label: actor.label,
    audit_actor_user_id: actor.userId,
    audit_action: action,
    audit_request_id: audit.requestId,
    audit_client_address: audit.clientAddress,
    audit_at: audit.at.toISOString(),
  };
}

/**
 * A CTE's INSERT of one entry per row of `from` (a CTE of the change: one row), for statements that
 * make their change in one statement (POST /keys), declared with named parameters (namedStatement,
 * tenantStatement): the entry's values are auditValues' (`:audit_action`, ...); `organization`,
 * `targetType`, `targetId` and `changes` are SQL over `from`'s columns.
 */
export function auditInsertSql(from: string, columns: { organization: string; targetType: string; targetId: string; changes: string }): string {
  return `INSERT INTO audit_log (id, organization_id, actor_kind, actor_key_hash, actor_label, actor_user_id, action, target_type, target_id,
                         changes, request_id, client_address, created_at)
  SELECT gen_random_uuid(), ${columns.organization}, :audit_actor_kind::text, :audit_actor_key_hash::text, :audit_actor_label::text,
         :audit_actor_user_id::text, :audit_action::text, ${columns.targetType}, ${columns.targetId}, ${columns.changes},
         :audit_request_id::text, :audit_client_address::text, :audit_at::timestamptz
  FROM ${from}`;
}

/** Values as JSON would write them (Decimal and Date as strings; undefined dropped). */
function jsonSafe(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null');
}

/**
 * The fields of `after` whose value differs from `before`'s (compared as JSON), with both sides:
 * `{ before: { name: 'a' }, after: { name: 'b' } }`. Fields in `masked` are written as `mask(value)`.
 */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>, fields: readonly string[] = Object.keys(after)): Changes {
  const was: Record<string, unknown> = {};
  const is: Record<string, unknown> = {};
  for (const field of fields) {
    if (!(field in after) || after[field] === undefined) continue;
    const a = jsonSafe(before[field]);
    const b = jsonSafe(after[field]);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    was[field] = a;
    is[field] = b;
  }
  return { before: was, after: is };
}

/** The fields given (undefined ones dropped), as an entry's `after` of a create. */
export function created(after: Record<string, unknown>): Changes {
  return { after: jsonSafe(after) as Record<string, unknown> };
}

/** As an entry's `before` of a delete. */
export function removed(before: Record<string, unknown>): Changes {
  return { before: jsonSafe(before) as Record<string, unknown> };
}
