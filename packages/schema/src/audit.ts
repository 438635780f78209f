// The audit log (docs/audit.md): GET /api/v1/audit-logs and the platform's audit.platformList.
import { z } from 'zod';
import { TimestampSchema } from './common.js';

export const AUDIT_ACTOR_KINDS = ['management_key', 'regular_key', 'platform_key', 'scim_token', 'access_token', 'pkce', 'session'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];
export const AuditActorKindSchema = z
  .enum(AUDIT_ACTOR_KINDS)
  .describe(
    'management_key, regular_key, platform_key, scim_token, access_token (a federated token acting as a key), pkce (an anonymous code exchange) or session (a person signed in: user_id names them, key_hash the key a key-made session was signed in with)',
  );

export const AuditEntrySchema = z
  .object({
    id: z.string().describe('The entry id'),
    organization_id: z.string().nullable().describe('The organization the change concerns; null for platform writes that concern none (the catalog)'),
    actor: z.object({
      kind: AuditActorKindSchema,
      key_hash: z.string().nullable().describe("The acting key's stable hash (a platform key's or SCIM token's id); null for a PKCE exchange"),
      label: z.string().nullable().describe("The acting key's masked label (a platform key's or SCIM token's name)"),
      user_id: z.string().nullable().describe('The user behind the acting key'),
    }),
    action: z.string().describe('What was done, `<resource>.<verb>` (docs/audit.md lists them)'),
    target: z.object({
      type: z.string().describe('The kind of thing changed, e.g. key, workspace, guardrail'),
      id: z.string().nullable().describe('Its id (a key: its stable hash)'),
    }),
    changes: z
      .record(z.string(), z.unknown())
      .describe('The changed fields: `before` and `after` objects, secrets masked as answers mask them (docs/audit.md)'),
    request_id: z.string().nullable().describe('The X-Request-Id of the request that made the change'),
    client_address: z.string().nullable().describe("The client's address (through TRUST_PROXY's proxies)"),
    created_at: TimestampSchema,
  })
  .describe('One audit log entry: one change');
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

const auditFilters = {
  actor: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe('Only entries of the key with this stable hash (64 lowercase hex)'),
  action: z
    .string()
    .regex(/^[a-zA-Z]+\.[a-zA-Z]+$/)
    .max(100)
    .optional()
    .describe('Only entries of this action, e.g. keys.update'),
  target_type: z
    .string()
    .regex(/^[a-z_]+$/)
    .max(50)
    .optional()
    .describe('Only entries about this kind of target, e.g. key'),
  target_id: z.string().min(1).max(200).optional().describe('Only entries about this target (with target_type)'),
  since: z.iso.datetime({ offset: true }).optional().describe('Only entries made at or after this time (ISO 8601)'),
  until: z.iso.datetime({ offset: true }).optional().describe('Only entries made before this time (ISO 8601)'),
  limit: z.number().int().min(1).max(100).default(50).describe('1..100, default 50'),
  cursor: z.string().min(1).max(200).optional().describe('Opaque: the `cursor` of the previous page'),
};

export const ListAuditLogsInputSchema = z.object(auditFilters);
export type ListAuditLogsInput = z.infer<typeof ListAuditLogsInputSchema>;

export const PlatformListAuditLogsInputSchema = z.object({
  ...auditFilters,
  organization_id: z.string().min(1).max(200).optional().describe("Only this organization's entries; default: every organization's, and the platform's own"),
});
export type PlatformListAuditLogsInput = z.infer<typeof PlatformListAuditLogsInputSchema>;

export const AuditLogPageSchema = z
  .object({
    data: z.array(AuditEntrySchema).describe('Entries, newest first'),
    cursor: z.string().nullable().describe('The next page (older entries); null at the end'),
  })
  .describe('A page of audit log entries');
export type AuditLogPage = z.infer<typeof AuditLogPageSchema>;
