// The tenant filters of every read and write, in one place. Services ask for them and never spell
// `organization_id: actor...` in a Prisma `where`/`data`, nor the tenant's parameter in raw SQL
// (`$n`, `:name`), themselves (lint/tenant-filters.grit fails `pnpm lint` when one does). The rules:
// - every row a tenant reads or writes is its organization's (tenantWhere, tenantData);
// - of a table with a workspace_id, a regular key sees its own workspace's rows, a management key
//   every workspace's of its organization (visibleRows);
// - of generations (and their content and feedback), a regular key sees those of its own workspace
//   made by its own user or by itself, a management key its organization's (generationWhere).
// Raw statements that scope by the tenant are declared with tenantStatement: the tenant's clause and
// its named parameters (`:tenant_organization`, ...: names of the scope, prefixed `tenant_`) come
// from here, and tenantValues adds their values to the statement's own.
import { namedStatement, Prisma, type RowSchema, type Statement } from '@switchyard/db';
import type { Actor } from './callers.js';
import { readsOrganization } from './rules.js';

/** The organization a filter is for: an Actor, or the platform naming one organization. */
export interface Tenant {
  organizationId: string;
}

/** The rows of the caller's organization: a Prisma `where` fragment (spread it, or nest it in a compound key). */
export function tenantWhere(tenant: Tenant): { organization_id: string } {
  return { organization_id: tenant.organizationId };
}

/** The organization a row is written for: a Prisma `data` fragment. */
export function tenantData(tenant: Tenant): { organization_id: string } {
  return { organization_id: tenant.organizationId };
}

/** The rows a caller may see of a table with organization_id and workspace_id columns. */
export function visibleRows(actor: Actor): { organization_id: string; workspace_id?: string } {
  return readsOrganization(actor) ? tenantWhere(actor) : { ...tenantWhere(actor), workspace_id: actor.workspaceId };
}

/** What the generation rule reads of a caller (an Actor gives it through viewerOf; the bench builds one). */
export interface Viewer extends Tenant {
  managementKey: boolean;
  workspaceId: string;
  userId: string;
  keyId: string;
}

export function viewerOf(actor: Actor): Viewer {
  return {
    organizationId: actor.organizationId,
    managementKey: readsOrganization(actor),
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    keyId: actor.key.id,
  };
}

/**
 * The generations a caller may read: a management key its organization's; a regular key those of
 * its own workspace made by its own user or by itself (keys a management key makes share its user,
 * so the user alone would let one workspace's key read another's).
 */
export function generationWhere(viewer: Viewer): Prisma.GenerationWhereInput {
  if (viewer.managementKey) return tenantWhere(viewer);
  return { ...tenantWhere(viewer), workspace_id: viewer.workspaceId, OR: [{ user_id: viewer.userId }, { api_key_id: viewer.keyId }] };
}

/** A raw statement's values by name (namedStatement). */
type Values = Readonly<Record<string, unknown>>;

/**
 * The scopes of raw statements, each with its named parameters and its clause over a table alias:
 * - organization: `:tenant_organization`, the organization id;
 * - generation: as generationWhere; `:tenant_organization`, `:tenant_management_key`,
 *   `:tenant_workspace`, `:tenant_user` and `:tenant_key` (the key's id);
 * - ownGeneration: a generation of the caller's own user among those (feedback is given on one's
 *   own generations); the same parameters.
 * A statement's own parameters take any other name: none of them starts with `tenant_`.
 */
const GENERATION_CLAUSE = (a: string) =>
  `${a}organization_id = :tenant_organization AND (:tenant_management_key::boolean OR (${a}workspace_id = :tenant_workspace::uuid AND (${a}user_id = :tenant_user OR ${a}api_key_id = :tenant_key::uuid)))`;

const GENERATION_NAMES = ['tenant_organization', 'tenant_management_key', 'tenant_workspace', 'tenant_user', 'tenant_key'] as const;

/** The viewer's values of a generation scope, with the statement's own (the scope's written last: an own value never replaces one). */
const generationValues = (v: Viewer, own: Values): Values => ({
  ...own,
  tenant_organization: v.organizationId,
  tenant_management_key: v.managementKey,
  tenant_workspace: v.workspaceId,
  tenant_user: v.userId,
  tenant_key: v.keyId,
});

const SCOPES = {
  organization: {
    names: ['tenant_organization'],
    values: (t: Tenant, own: Values): Values => ({ ...own, tenant_organization: t.organizationId }),
    clause: (a: string) => `${a}organization_id = :tenant_organization`,
  },
  generation: {
    names: GENERATION_NAMES,
    values: generationValues,
    clause: (a: string) => GENERATION_CLAUSE(a),
  },
  ownGeneration: {
    names: GENERATION_NAMES,
    values: generationValues,
    clause: (a: string) => `${GENERATION_CLAUSE(a)} AND ${a}user_id = :tenant_user`,
  },
} as const;

export type TenantScope = keyof typeof SCOPES;
/** Whom a scope's values are read from: the organization alone, or the whole viewer. */
export type ScopeSubject<S extends TenantScope> = Parameters<(typeof SCOPES)[S]['values']>[0];

/** The tenant's part of a raw statement's text. */
export interface TenantClauses {
  /** The scope's condition on the table `alias` (none: unqualified columns), e.g. `k.organization_id = :tenant_organization`. */
  where(alias?: string): string;
  /** The organization id's parameter, for a column not named organization_id (e.g. `o.id = ${tenant.organizationId}`). */
  readonly organizationId: string;
}

/** A namedStatement whose tenant parameters are its scope's (see SCOPES). */
export interface TenantStatement<Row extends RowSchema, S extends TenantScope> extends Statement<Row> {
  readonly scope: S;
}

/**
 * Declares a raw statement (once, at module load) whose tenant clause `text` takes from `tenant`;
 * the rest of its text names its own parameters (`:workspace_id`). A text that leaves out one of its
 * scope's parameters is refused here (its every call would fail).
 */
export function tenantStatement<S extends TenantScope, Row extends RowSchema>(
  scope: S,
  text: (tenant: TenantClauses) => string,
  row: Row,
): TenantStatement<Row, S> {
  const clauses: TenantClauses = { where: (alias) => SCOPES[scope].clause(alias ? `${alias}.` : ''), organizationId: ':tenant_organization' };
  const stmt = namedStatement(text(clauses), row);
  const missing = SCOPES[scope].names.filter((name) => !stmt.names?.includes(name));
  if (missing.length > 0) throw new Error(`a tenant statement of scope ${scope} has no :${missing.join(', :')}: ${stmt.text.slice(0, 120)}`);
  return { ...stmt, scope };
}

/** A tenant statement's values: its scope's (from `subject`) and its own (`own`, by name), in one record. */
export function tenantValues<S extends TenantScope>(stmt: TenantStatement<RowSchema, S>, subject: ScopeSubject<S>, own: Values = {}): Values {
  return (SCOPES[stmt.scope].values as (s: ScopeSubject<S>, own: Values) => Values)(subject, own);
}

/** A Prisma.sql fragment of the organization's rows (`<alias>.organization_id = <the id>`), for $queryRaw templates. */
export function tenantSql(tenant: Tenant, alias?: string): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(alias ? `${alias}.` : '')}organization_id = ${tenant.organizationId}`;
}

/**
 * A filter of this module (tenantWhere, visibleRows) as SQL, for statements built at run time: its
 * values go through `param` once (it adds a value to the statement's values and answers its
 * placeholder); the answer writes the condition on a table alias (none: unqualified columns).
 */
export function whereSql(filter: { organization_id: string; workspace_id?: string }, param: (value: unknown) => string): (alias?: string) => string {
  const organization = param(filter.organization_id);
  const workspace = filter.workspace_id === undefined ? null : param(filter.workspace_id);
  return (alias) => {
    const a = alias ? `${alias}.` : '';
    return `${a}organization_id = ${organization}${workspace ? ` AND ${a}workspace_id = ${workspace}::uuid` : ''}`;
  };
}
