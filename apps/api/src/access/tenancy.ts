// The tenant filters of every read and write, in one place. Services ask for them and never spell
// `organization_id: actor...` in a Prisma `where`/`data`, nor the tenant's `$n` in raw SQL, themselves
// (lint/tenant-filters.grit fails `pnpm lint` when one does). The rules:
// - every row a tenant reads or writes is its organization's (tenantWhere, tenantData);
// - of a table with a workspace_id, a regular key sees its own workspace's rows, a management key
//   every workspace's of its organization (visibleRows);
// - of generations (and their content and feedback), a regular key sees those of its own workspace
//   made by its own user or by itself, a management key its organization's (generationWhere).
// Raw statements that scope by the tenant are declared with tenantStatement: the tenant's clause and
// its parameters ($1.. of the statement, named by the scope) come from here, and tenantValues puts
// their values first.
import { Prisma, statement, type RowSchema, type Statement } from '@switchyard/db';
import type { Actor } from './callers.js';

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
  return actor.key.is_management_key ? tenantWhere(actor) : { ...tenantWhere(actor), workspace_id: actor.workspaceId };
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
    managementKey: actor.key.is_management_key,
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    keyId: actor.key.id,
  };
}

/**
 * The generations a caller may read: a management key its organization's; a regular key those of
 * its own workspace made by its own user or by itself (issue 37: keys a management key makes share
 * its user, so the user alone would let one workspace's key read another's).
 */
export function generationWhere(viewer: Viewer): Prisma.GenerationWhereInput {
  if (viewer.managementKey) return tenantWhere(viewer);
  return { ...tenantWhere(viewer), workspace_id: viewer.workspaceId, OR: [{ user_id: viewer.userId }, { api_key_id: viewer.keyId }] };
}

/**
 * The scopes of raw statements, each with its parameters (always the statement's first ones, in
 * this order) and its clause over a table alias:
 * - organization: $1 the organization id;
 * - generation: as generationWhere; $1 organization, $2 management key, $3 workspace, $4 user, $5 key id;
 * - ownGeneration: a generation of the caller's own user among those (feedback is given on one's
 *   own generations); the same parameters.
 * The statement's own parameters follow them: from $2 (organization) or $6 (the others).
 */
const GENERATION_CLAUSE = (a: string) =>
  `${a}organization_id = $1 AND ($2::boolean OR (${a}workspace_id = $3::uuid AND (${a}user_id = $4 OR ${a}api_key_id = $5::uuid)))`;

const SCOPES = {
  organization: {
    values: (t: Tenant): unknown[] => [t.organizationId],
    clause: (a: string) => `${a}organization_id = $1`,
  },
  generation: {
    values: (v: Viewer): unknown[] => [v.organizationId, v.managementKey, v.workspaceId, v.userId, v.keyId],
    clause: (a: string) => GENERATION_CLAUSE(a),
  },
  ownGeneration: {
    values: (v: Viewer): unknown[] => [v.organizationId, v.managementKey, v.workspaceId, v.userId, v.keyId],
    clause: (a: string) => `${GENERATION_CLAUSE(a)} AND ${a}user_id = $4`,
  },
} as const;

export type TenantScope = keyof typeof SCOPES;
/** Whom a scope's values are read from: the organization alone, or the whole viewer. */
export type ScopeSubject<S extends TenantScope> = Parameters<(typeof SCOPES)[S]['values']>[0];

/** The tenant's part of a raw statement's text. */
export interface TenantClauses {
  /** The scope's condition on the table `alias` (none: unqualified columns), e.g. `k.organization_id = $1`. */
  where(alias?: string): string;
  /** The organization id's parameter, for a column not named organization_id (e.g. `o.id = ${tenant.organizationId}`). */
  readonly organizationId: string;
}

/** A statement whose first parameters are its scope's (see SCOPES). */
export interface TenantStatement<Row extends RowSchema, S extends TenantScope> extends Statement<Row> {
  readonly scope: S;
}

/** Declares a raw statement (once, at module load) whose tenant clause `text` takes from `tenant`. */
export function tenantStatement<S extends TenantScope, Row extends RowSchema>(
  scope: S,
  text: (tenant: TenantClauses) => string,
  row: Row,
): TenantStatement<Row, S> {
  const clauses: TenantClauses = { where: (alias) => SCOPES[scope].clause(alias ? `${alias}.` : ''), organizationId: '$1' };
  return { ...statement(text(clauses), row), scope };
}

/** A tenant statement's values: its scope's (from `subject`), then its own `values` ($2.. / $4.. / $6..). */
export function tenantValues<S extends TenantScope>(stmt: TenantStatement<RowSchema, S>, subject: ScopeSubject<S>, ...values: unknown[]): unknown[] {
  return [...(SCOPES[stmt.scope].values as (s: ScopeSubject<S>) => unknown[])(subject), ...values];
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
