// Organizations, as the platform manages them (platform keys only): create one with its default
// workspace, an owner and a management key; list them; disable one (its keys are refused at once on
// this server, within CACHE_TTL_MS on others).
import type { Prisma, Db, Organization as OrganizationRow } from '@switchyard/db';
import type {
  CreateOrganizationInput,
  CreateOrganizationOutput,
  ListOrganizationsInput,
  Organization,
  OrganizationSettings,
  UpdateOrganizationSettingsInput,
} from '@switchyard/schema';
import type { KeyCache } from '../../access/callers.js';
import { tenantData, tenantWhere } from '../../access/tenancy.js';
import { appendAudit, changedFields, type Audit } from '../audit/audit.js';
import { NotFound } from '../../errors.js';
import { platformOrganization } from '../../access/workspaces.js';
import { pageOf } from '../pages.js';
import { newId } from '../../lib/ids.js';
import { generateApiKey, hashApiKey, maskApiKey } from '../keys/key-format.js';
import { userIdForEmail } from '../organization/users.js';
import { type AlertColumns, alertSettingsData, alertSettingsOf } from '../settings/alerts-rows.js';
import { retentionSettingsOf } from '../settings/retention-rows.js';

type Writer = Prisma.TransactionClient;

function organizationOf(row: OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    default_workspace_id: row.default_workspace_id ?? '',
    credit_balance: row.credit_balance.toNumber(),
    disabled: row.disabled_at !== null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  } satisfies Organization;
}

/**
 * An organization with its `default` workspace, an owner (org:admin, in the default workspace) and
 * a management key owned by them, inside the caller's transaction. The key's secret is returned once.
 */
export async function createOrganizationIn(
  tx: Writer,
  input: CreateOrganizationInput & { managementKey?: string | undefined },
): Promise<CreateOrganizationOutput> {
  const organizationId = newId('org');
  const secret = input.managementKey ?? generateApiKey();
  await tx.organization.create({ data: { id: organizationId, name: input.name } });
  const userId = await userIdForEmail(tx, input.owner_email ?? `owner@${organizationId.replace('_', '-')}.invalid`);
  await tx.organizationMember.create({
    data: {
      ...tenantData({ organizationId }),
      user_id: userId,
      role: 'admin',
      first_name: input.owner_first_name ?? '',
      last_name: input.owner_last_name ?? '',
    },
  });
  const workspace = await tx.workspace.create({ data: { ...tenantData({ organizationId }), slug: 'default', name: 'Default' } });
  const organization = await tx.organization.update({ where: { id: organizationId }, data: { default_workspace_id: workspace.id } });
  await tx.workspaceMember.create({
    data: { ...tenantData({ organizationId }), workspace_id: workspace.id, user_id: userId, role: 'admin' },
  });
  const hash = hashApiKey(secret);
  await tx.apiKey.create({
    data: {
      ...tenantData({ organizationId }),
      workspace_id: workspace.id,
      creator_user_id: userId,
      hash,
      label: maskApiKey(secret),
      name: 'Management key',
      is_management_key: true,
    },
  });
  return {
    organization_id: organization.id,
    workspace_id: workspace.id,
    owner_user_id: userId,
    management_key: secret,
    management_key_hash: hash,
    organization: organizationOf(organization),
  };
}

export function createOrganization(db: Db, input: CreateOrganizationInput, audit: Audit): Promise<CreateOrganizationOutput> {
  return db.$transaction(async (tx) => {
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
export async function listOrganizations(db: Db, page: ListOrganizationsInput) {
  return pageOf(
    page,
    (slice) => db.organization.findMany({ orderBy: [{ created_at: 'asc' }, { id: 'asc' }], ...slice }),
    () => db.organization.count(),
    organizationOf,
  );
}

/** Disables an organization: every key of it is refused (401). Disabling it again changes nothing. */
export async function disableOrganization(db: Db, keys: KeyCache, organizationId: string, now: Date, audit: Audit): Promise<Organization> {
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
  keys.forgetOrganization(organizationId);
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
export async function getOrganizationSettings(db: Db, input: { organization_id: string }): Promise<{ data: OrganizationSettings }> {
  await assertOrganization(db, input.organization_id);
  const row = await db.organizationSettings.findUnique({ where: tenantWhere({ organizationId: input.organization_id }) });
  return { data: settingsOf(input.organization_id, row) };
}

/**
 * organizations.updateSettings: sets the fields given (null: back to the server's default). Every
 * replica's routing sees the change within the notification delay (trigger "routing:<organization>").
 */
export async function updateOrganizationSettings(db: Db, input: UpdateOrganizationSettingsInput, audit: Audit): Promise<{ data: OrganizationSettings }> {
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
