// The statement of GET /guardrails (guardrails.service.ts's listGuardrails), with its values: also
// the bench's database floor (through statements.ts).
import { LimitReset, modelColumns, parsedJson, rowOrNulls, type Guardrail as GuardrailRow } from '@switchyard/db';
import { GUARDRAIL_FLAG_FIELDS } from '@switchyard/schema';
import { z } from 'zod';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';

/** The nullable ZDR and training flags, one column each. */
const FLAG_COLUMNS = Object.fromEntries(GUARDRAIL_FLAG_FIELDS.map((field) => [field, z.boolean().nullable()])) as Record<
  (typeof GUARDRAIL_FLAG_FIELDS)[number],
  z.ZodNullable<z.ZodBoolean>
>;

/**
 * One page of a workspace's guardrails (:workspace_id, or the organization's default workspace when
 * null) with the total and the workspace id, in one round trip. A page past the end is one row of nulls.
 */
const GUARDRAILS_PAGE = tenantStatement(
  'organization',
  (tenant) => `
  SELECT w.id AS listed_workspace_id, (SELECT count(*) FROM guardrails WHERE workspace_id = w.id)::int AS total, g.*
  FROM (SELECT coalesce(:workspace_id::uuid, o.default_workspace_id) AS id FROM organizations o WHERE o.id = ${tenant.organizationId}) w
  LEFT JOIN LATERAL (
    SELECT * FROM guardrails WHERE workspace_id = w.id ORDER BY created_at, id OFFSET :offset LIMIT :limit
  ) g ON true
  ORDER BY g.created_at, g.id`,
  rowOrNulls(
    { listed_workspace_id: z.string().nullable(), total: z.number().int() },
    modelColumns<GuardrailRow>()({
      id: z.string(),
      organization_id: z.string(),
      workspace_id: z.string(),
      name: z.string(),
      description: z.string(),
      allowed_models: parsedJson,
      ignored_models: parsedJson,
      allowed_providers: parsedJson,
      ignored_providers: parsedJson,
      enforce_zdr: z.boolean(),
      limit_usd: z.string(),
      reset_interval: z.enum(LimitReset).nullable(),
      include_byok_in_budgets: z.boolean(),
      allowed_data_regions: parsedJson,
      content_filters: parsedJson,
      content_filter_builtins: parsedJson,
      ...FLAG_COLUMNS,
      created_at: z.date(),
      updated_at: z.date(),
    }),
  ),
);

/**
 * The one statement GET /guardrails makes per page, with its values: `workspaceId` is the workspace
 * named (already resolved), or null for the organization's default. Exported for the bench's
 * database floor.
 */
export function guardrailsPageQuery(organizationId: string, workspaceId: string | null, page: { offset: number; limit: number }) {
  return {
    statement: GUARDRAILS_PAGE,
    values: tenantValues(GUARDRAILS_PAGE, { organizationId }, { workspace_id: workspaceId, offset: page.offset, limit: page.limit }),
  };
}
