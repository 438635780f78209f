// The statements of the deciders' snapshot. It is a platform read across organizations, in pages:
// the organizations chosen for a page come first (a set of ids, joined on), and every row is
// selected with the columns the routing rules read, as the server's own loaders read them for one
// key (access/callers.ts), one workspace (routing.service.ts's WorkspaceRoutingCache) and one key's
// guardrails (guardrails/guardrail-cache.ts). BYOK secrets are never selected: only whether a
// credential has one (the rules skip one without).
import { LimitReset, parsedJson, statement } from '@switchyard/db';
import { z } from 'zod';
import { GuardrailPolicyRow } from '../guardrails/guardrail-cache.js';

const KEY_COLUMNS = `
  s.secret_hash, s.expires_at AS secret_expires_at,
  k.id::text AS id, k.organization_id, k.workspace_id::text AS workspace_id, k.creator_user_id, k.hash, k.label,
  k."limit"::text AS "limit", k.limit_reset::text AS limit_reset, k.include_byok_in_limit, k.free_model_daily_limit,
  k.expires_at, k.disabled, k.deleted_at, k.minted_by_key_id::text AS minted_by_key_id`;

const KEY_ROW = z.object({
  secret_hash: z.string(),
  secret_expires_at: z.date().nullable(),
  id: z.string(),
  organization_id: z.string(),
  workspace_id: z.string(),
  creator_user_id: z.string(),
  hash: z.string(),
  label: z.string(),
  limit: z.string().nullable(),
  limit_reset: z.enum(LimitReset).nullable(),
  include_byok_in_limit: z.boolean(),
  free_model_daily_limit: z.number().int(),
  expires_at: z.date().nullable(),
  disabled: z.boolean(),
  deleted_at: z.date().nullable(),
  minted_by_key_id: z.string().nullable(),
});

export type SnapshotKeyRow = z.infer<typeof KEY_ROW>;

/**
 * A page of live keys by secret hash, after `$1` (each secret of a rotated key is its own entry).
 * Deleted keys are left out of the pages (they only accumulate); a decider asks for a hash it does
 * not hold (KEYS_BY_HASH), which finds them.
 */
export const KEYS_PAGE = statement(
  `SELECT ${KEY_COLUMNS}
   FROM api_key_secrets s JOIN api_keys k ON k.id = s.api_key_id
   WHERE s.secret_hash > $1 AND k.deleted_at IS NULL
   ORDER BY s.secret_hash LIMIT $2`,
  KEY_ROW,
);

/** The keys that one of the hashes names (a secret's hash, or a key's stable hash: every secret of it), deleted ones too. */
export const KEYS_BY_HASH = statement(
  `SELECT ${KEY_COLUMNS}
   FROM api_key_secrets s JOIN api_keys k ON k.id = s.api_key_id
   WHERE s.secret_hash = ANY($1::text[]) OR k.hash = ANY($1::text[])
   ORDER BY s.secret_hash`,
  KEY_ROW,
);

/** A page of organizations by id, after `$1`. */
export const ORGANIZATIONS_PAGE = statement(
  `SELECT id, disabled_at IS NOT NULL AS disabled FROM organizations WHERE id > $1 ORDER BY id LIMIT $2`,
  z.object({ id: z.string(), disabled: z.boolean() }),
);

/** The organizations of the ids in `$1` that exist. */
export const ORGANIZATIONS_BY_ID = statement(
  `SELECT o.id, o.disabled_at IS NOT NULL AS disabled FROM unnest($1::text[]) AS chosen(id) JOIN organizations o ON o.id = chosen.id ORDER BY o.id`,
  z.object({ id: z.string(), disabled: z.boolean() }),
);

/** The live workspaces of the organizations in `$1`, with their budgets (in the order routing reads them). */
export const WORKSPACES = statement(
  `SELECT w.id::text AS id, w.organization_id, w.include_byok_in_budgets, w.default_provider_sort,
          coalesce((SELECT json_agg(json_build_object('interval', b.reset_interval::text, 'limit', b.limit_usd::text) ORDER BY b.reset_interval)
                    FROM budgets b WHERE b.workspace_id = w.id), '[]'::json) AS budgets
   FROM unnest($1::text[]) AS chosen(id) JOIN workspaces w ON w.organization_id = chosen.id
   WHERE w.deleted_at IS NULL
   ORDER BY w.organization_id, w.id`,
  z.object({
    id: z.string(),
    organization_id: z.string(),
    include_byok_in_budgets: z.boolean(),
    default_provider_sort: z.string().nullable(),
    budgets: z.array(z.object({ interval: z.enum(['daily', 'weekly', 'monthly', 'lifetime']), limit: z.string() })),
  }),
);

/** The enabled BYOK credentials of the organizations in `$1`, in routing's order; their secrets stay in the database. */
export const CREDENTIALS = statement(
  `SELECT c.id::text AS id, c.organization_id, c.workspace_id::text AS workspace_id, c.provider, c.secret_ciphertext IS NOT NULL AS has_secret,
          c.allowed_models, c.allowed_user_ids, c.allowed_api_key_hashes, c.is_fallback, c.is_byok_only, c.is_required, c.sort_order, c.declared_zdr
   FROM unnest($1::text[]) AS chosen(id) JOIN byok_credentials c ON c.organization_id = chosen.id
   WHERE c.deleted_at IS NULL AND NOT c.disabled
   ORDER BY c.provider, c.sort_order, c.created_at, c.id`,
  z.object({
    id: z.string(),
    organization_id: z.string(),
    workspace_id: z.string().nullable(),
    provider: z.string(),
    has_secret: z.boolean(),
    allowed_models: parsedJson,
    allowed_user_ids: parsedJson,
    allowed_api_key_hashes: parsedJson,
    is_fallback: z.boolean(),
    is_byok_only: z.boolean(),
    is_required: z.boolean(),
    sort_order: z.number().int(),
    declared_zdr: z.boolean().nullable(),
  }),
);

/** The guardrails of the organizations in `$1`, with what the rules read of them. */
export const GUARDRAILS = statement(
  `SELECT g.id::text AS id, g.organization_id, g.workspace_id::text AS workspace_id,
          g.allowed_models, g.ignored_models, g.allowed_providers, g.ignored_providers, g.allowed_data_regions,
          g.enforce_zdr, g.enforce_zdr_anthropic, g.enforce_zdr_openai, g.enforce_zdr_google, g.enforce_zdr_xai, g.enforce_zdr_other,
          g.limit_usd::text AS limit_usd, g.reset_interval::text AS reset_interval, g.include_byok_in_budgets
   FROM unnest($1::text[]) AS chosen(id) JOIN guardrails g ON g.organization_id = chosen.id
   ORDER BY g.id`,
  GuardrailPolicyRow.extend({ organization_id: z.string(), workspace_id: z.string() }),
);

/** The guardrail assignments (to keys, and to members) of the organizations in `$1`. */
export const ASSIGNMENTS = statement(
  `SELECT a.organization_id, a.guardrail_id::text AS guardrail_id, a.api_key_id::text AS api_key_id, NULL::text AS user_id
   FROM unnest($1::text[]) AS chosen(id) JOIN guardrail_key_assignments a ON a.organization_id = chosen.id
   UNION ALL
   SELECT m.organization_id, m.guardrail_id::text, NULL, m.user_id
   FROM unnest($1::text[]) AS chosen(id) JOIN guardrail_member_assignments m ON m.organization_id = chosen.id`,
  z.object({ organization_id: z.string(), guardrail_id: z.string(), api_key_id: z.string().nullable(), user_id: z.string().nullable() }),
);
