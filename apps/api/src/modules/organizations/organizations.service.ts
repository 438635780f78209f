// Organizations, as the platform manages them (platform keys only): create one with its default
// workspace, an owner and a management key; list them; disable one (its keys are refused at once on
// this server, within CACHE_TTL_MS on others). Services take (deps, actor, input) (decision 0037): the
// actor is the platform key (its audit entries are made from it), and the input names the organization.
import type { Db } from '@switchyard/db';
import type {
  CreateOrganizationInput,
  CreateOrganizationOutput,
  ListOrganizationsInput,
  Organization,
  OrganizationRefInput,
  OrganizationSettings,
  UpdateOrganizationSettingsInput,
} from '@switchyard/schema';
import type { PlatformActor } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import type { Audited, Uses } from '../../trpc/service-deps.js';
import { appendAudit, auditOfPlatform, changedFields } from '../audit/audit.js';
import { NotFound } from '../../lib/errors.js';
import { platformOrganization } from '../../access/workspaces.js';
import { pageOf } from '../pages.js';
import { type AlertColumns, alertSettingsData, alertSettingsOf } from '../settings/alerts-rows.js';
import { retentionSettingsOf } from '../settings/retention-rows.js';
import { organizationOf } from './organization-rows.js';
import { createOrganizationIn } from './organization-setup.js';

/** organizations.create: an organization with its default workspace, owner and management key (createOrganizationIn). */
export function createOrganization(deps: Uses<'db' | Audited>, actor: PlatformActor, input: CreateOrganizationInput): Promise<CreateOrganizationOutput> {
  const audit = auditOfPlatform(actor, deps);
  return deps.db.$transaction(async (tx) => {
    const made = await createOrganizationIn(tx, input);
    await appendAudit(tx, audit, {
      action: 'organizations.create',
      targetType: 'organization',
      targetId: made.organization_id,
      organizationId: made.organization_id,
      changes: { after: { name: input.name, owner_user_id: made.owner_user_id, management_key_hash: made.management_key_hash } },
    });
    return made;
  });
}

/** Oldest first. */
export async function listOrganizations(deps: Uses<'db'>, _actor: PlatformActor, input: ListOrganizationsInput) {
  const { db } = deps;
  return pageOf(
    input,
    (slice) => db.organization.findMany({ orderBy: [{ created_at: 'asc' }, { id: 'asc' }], ...slice }),
    () => db.organization.count(),
    organizationOf,
  );
}

/** Disables an organization: every key of it is refused (401). Disabling it again changes nothing. */
export async function disableOrganization(deps: Uses<'db' | 'keys' | Audited>, actor: PlatformActor, input: OrganizationRefInput): Promise<Organization> {
  const { db } = deps;
  const organizationId = input.organization_id;
  const audit = auditOfPlatform(actor, deps);
  const now = audit.at;
  await platformOrganization(db, organizationId);
  await db.$transaction(async (tx) => {
    const { count } = await tx.organization.updateMany({ where: { id: organizationId, disabled_at: null }, data: { disabled_at: now } });
    await appendAudit(tx, audit, {
      action: 'organizations.disable',
      targetType: 'organization',
      targetId: organizationId,
      organizationId,
      changes: count > 0 ? { before: { disabled: false }, after: { disabled: true } } : { before: {}, after: {} },
    });
  });
  deps.keys.forgetOrganization(organizationId);
  return organizationOf(await db.organization.findUniqueOrThrow({ where: { id: organizationId } }));
}

/** 404 unless the organization exists (disabled ones have settings too). */
async function assertOrganization(db: Db, organizationId: string): Promise<void> {
  const found = await db.organization.findUnique({ where: { id: organizationId }, select: { id: true } });
  if (!found) throw new NotFound(`organization ${organizationId}`);
}

/** The answer: the organization's id (`of`, the platform's input) and its row's fields, null when unset. */
function settingsOf(
  of: string,
  row:
    | (AlertColumns & {
        free_model_requests_per_minute: number | null;
        api_requests_per_minute_per_key: number | null;
        api_requests_per_minute: number | null;
        content_retention_days: number | null;
        updated_at: Date;
      })
    | null,
): OrganizationSettings {
  return {
    organization_id: of,
    free_model_requests_per_minute: row?.free_model_requests_per_minute ?? null,
    api_requests_per_minute_per_key: row?.api_requests_per_minute_per_key ?? null,
    api_requests_per_minute: row?.api_requests_per_minute ?? null,
    ...alertSettingsOf(row),
    ...retentionSettingsOf(row),
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}

/** organizations.settings: the organization's settings row; every field null until set. */
export async function getOrganizationSettings(deps: Uses<'db'>, _actor: PlatformActor, input: OrganizationRefInput): Promise<{ data: OrganizationSettings }> {
  const { db } = deps;
  await assertOrganization(db, input.organization_id);
  const row = await db.organizationSettings.findUnique({ where: tenantWhere({ organizationId: input.organization_id }) });
  return { data: settingsOf(input.organization_id, row) };
}

/**
 * organizations.updateSettings: sets the fields given (null: back to the server's default). Every
 * replica's routing sees the change within the notification delay (trigger "routing:<organization>").
 */
export async function updateOrganizationSettings(
  deps: Uses<'db' | Audited>,
  actor: PlatformActor,
  input: UpdateOrganizationSettingsInput,
): Promise<{ data: OrganizationSettings }> {
  const { db } = deps;
  const audit = auditOfPlatform(actor, deps);
  await assertOrganization(db, input.organization_id);
  const { organization_id: organizationId, alert_thresholds, credits_low_usd, ...quotas } = input;
  const fields = { ...quotas, ...alertSettingsData({ alert_thresholds, credits_low_usd }) };
  const given = Object.keys(input).filter((k) => k !== 'organization_id' && input[k as keyof typeof input] !== undefined);
  const row = await db.$transaction(async (tx) => {
    const before = await tx.organizationSettings.findUnique({ where: tenantWhere({ organizationId }) });
    const row = await tx.organizationSettings.upsert({
      where: tenantWhere({ organizationId }),
      create: { ...tenantData({ organizationId }), ...fields },
      update: fields,
    });
    await appendAudit(tx, audit, {
      action: 'organizations.updateSettings',
      targetType: 'organization',
      targetId: organizationId,
      organizationId,
      changes: changedFields(settingsOf(organizationId, before), settingsOf(organizationId, row), given),
    });
    return row;
  });
  return { data: settingsOf(organizationId, row) };
}
