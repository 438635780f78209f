// What a decider in the routing service's own process reads (docs/decider.md): a snapshot of what
// @switchyard/rules ask for a decision that holds nothing, in parts and pages, and what is left of
// the limits that apply. The snapshot carries a protocol version: a decider names the version it
// speaks, and the server answers the versions it serves, or refuses with the ones it does.
import { Prisma, queryRows, type Db } from '@switchyard/db';
import type { LimitCheck } from '@switchyard/rules';
import type { PlatformActor } from '../../access/callers.js';
import { Invalid } from '../../lib/errors.js';
import type { Uses } from '../../trpc/service-deps.js';
import { defaultGuardrailId } from '../guardrails/default-guardrail.js';
import { isFreeModel } from '../models/resolve-model.js';
import { remainingOf } from '../routing/spend.js';
import {
  ASSIGNMENTS,
  CREDENTIALS,
  GUARDRAILS,
  KEYS_BY_HASH,
  KEYS_PAGE,
  ORGANIZATIONS_BY_ID,
  ORGANIZATIONS_PAGE,
  type SnapshotKeyRow,
  WORKSPACES,
} from './decider-queries.js';

/** The snapshot protocol's version this server speaks; it also serves the ones in SERVED_VERSIONS. */
export const DECIDER_PROTOCOL_VERSION = 1;
export const SERVED_VERSIONS: readonly number[] = [1];

/** The most entries a page holds (and the default). */
export const MAX_KEYS_PAGE = 5000;
export const MAX_ORGANIZATIONS_PAGE = 500;

function servedVersion(version: number): void {
  if (!SERVED_VERSIONS.includes(version)) {
    throw new Invalid(`Decider protocol version ${version} is not served here (served: ${SERVED_VERSIONS.join(', ')}). Upgrade the decider or the server.`);
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * A numeric column's text as the server's own loaders give it to the rules (a Prisma Decimal's
 * toString: "1", not the column's "1.000000000000"), since refusal messages quote it.
 */
const decimalText = (text: string | null) => (text === null ? null : new Prisma.Decimal(text).toString());

/** A JSON column's value, as the answer's type names it (not Prisma's type, which the client package cannot name). */
const json = (value: unknown): unknown => value;

function keyEntry(row: SnapshotKeyRow) {
  return {
    secret_hash: row.secret_hash,
    secret_expires_at: iso(row.secret_expires_at),
    id: row.id,
    organization_id: row.organization_id,
    workspace_id: row.workspace_id,
    creator_user_id: row.creator_user_id,
    hash: row.hash,
    label: row.label,
    limit: decimalText(row.limit),
    limit_reset: row.limit_reset,
    include_byok_in_limit: row.include_byok_in_limit,
    free_model_daily_limit: row.free_model_daily_limit,
    expires_at: iso(row.expires_at),
    disabled: row.disabled,
    deleted_at: iso(row.deleted_at),
    minted_by_key_id: row.minted_by_key_id,
  };
}

export type SnapshotKey = ReturnType<typeof keyEntry>;

/** The keys part: a page of live keys after `cursor`, or the keys that `hashes` name (deleted ones too). */
export async function snapshotKeys(
  deps: Uses<'db'>,
  _actor: PlatformActor,
  input: { version: number; cursor?: string | null | undefined; limit?: number | undefined; hashes?: string[] | undefined },
) {
  servedVersion(input.version);
  if (input.hashes) {
    const rows = input.hashes.length === 0 ? [] : await queryRows(deps.db, KEYS_BY_HASH, [input.hashes]);
    return { version: DECIDER_PROTOCOL_VERSION, keys: rows.map(keyEntry), next_cursor: null };
  }
  const limit = Math.min(input.limit ?? MAX_KEYS_PAGE, MAX_KEYS_PAGE);
  const rows = await queryRows(deps.db, KEYS_PAGE, [input.cursor ?? '', limit]);
  return {
    version: DECIDER_PROTOCOL_VERSION,
    keys: rows.map(keyEntry),
    next_cursor: rows.length === limit ? rows[rows.length - 1]!.secret_hash : null,
  };
}

/** Each organization's state and routing rows: its live workspaces (budgets, sealed credentials), guardrails and their assignments. */
async function organizationRows(db: Db, organizations: readonly { id: string; disabled: boolean }[]) {
  const ids = organizations.map((o) => o.id);
  const [workspaces, credentials, guardrails, assignments] =
    ids.length === 0
      ? [[], [], [], []]
      : await Promise.all([
          queryRows(db, WORKSPACES, [ids]),
          queryRows(db, CREDENTIALS, [ids]),
          queryRows(db, GUARDRAILS, [ids]),
          queryRows(db, ASSIGNMENTS, [ids]),
        ]);
  return organizations.map((o) => ({
    id: o.id,
    disabled: o.disabled,
    workspaces: workspaces
      .filter((w) => w.organization_id === o.id)
      .map(({ organization_id: _, budgets, ...w }) => ({
        ...w,
        budgets: budgets.map((b) => ({ interval: b.interval, limit: decimalText(b.limit)! })),
        default_guardrail_id: defaultGuardrailId(w.id),
      })),
    // In routing's order; a credential for every workspace has workspace_id null.
    credentials: credentials
      .filter((c) => c.organization_id === o.id)
      .map(({ organization_id: _, allowed_models, allowed_user_ids, allowed_api_key_hashes, ...c }) => ({
        ...c,
        allowed_models: json(allowed_models),
        allowed_user_ids: json(allowed_user_ids),
        allowed_api_key_hashes: json(allowed_api_key_hashes),
      })),
    guardrails: guardrails
      .filter((g) => g.organization_id === o.id)
      .map(({ organization_id: _, allowed_models, ignored_models, allowed_providers, ignored_providers, allowed_data_regions, ...g }) => ({
        ...g,
        allowed_models: json(allowed_models),
        ignored_models: json(ignored_models),
        allowed_providers: json(allowed_providers),
        ignored_providers: json(ignored_providers),
        allowed_data_regions: json(allowed_data_regions),
      })),
    key_assignments: assignments
      .filter((a) => a.organization_id === o.id && a.api_key_id !== null)
      .map((a) => ({ guardrail_id: a.guardrail_id, api_key_id: a.api_key_id! })),
    member_assignments: assignments
      .filter((a) => a.organization_id === o.id && a.user_id !== null)
      .map((a) => ({ guardrail_id: a.guardrail_id, user_id: a.user_id! })),
  }));
}

/** The organizations part: a page of organizations after `cursor`, or those of `ids` (an id that is gone is in `gone`). */
export async function snapshotOrganizations(
  deps: Uses<'db'>,
  _actor: PlatformActor,
  input: { version: number; cursor?: string | null | undefined; limit?: number | undefined; ids?: string[] | undefined },
) {
  servedVersion(input.version);
  if (input.ids) {
    const found = input.ids.length === 0 ? [] : await queryRows(deps.db, ORGANIZATIONS_BY_ID, [input.ids]);
    const organizations = await organizationRows(deps.db, found);
    const gone = input.ids.filter((id) => !found.some((o) => o.id === id));
    return { version: DECIDER_PROTOCOL_VERSION, organizations, gone, next_cursor: null };
  }
  const limit = Math.min(input.limit ?? MAX_ORGANIZATIONS_PAGE, MAX_ORGANIZATIONS_PAGE);
  const page = await queryRows(deps.db, ORGANIZATIONS_PAGE, [input.cursor ?? '', limit]);
  return {
    version: DECIDER_PROTOCOL_VERSION,
    organizations: await organizationRows(deps.db, page),
    gone: [] as string[],
    next_cursor: page.length === limit ? page[page.length - 1]!.id : null,
  };
}

/** The catalog part: models (whether free), aliases, variants and endpoints (with ZDR), from the server's catalog snapshot. */
export async function snapshotCatalog(deps: Uses<'db' | 'catalog'>, _actor: PlatformActor, input: { version: number }) {
  servedVersion(input.version);
  const catalog = await deps.catalog.snapshot(deps.db);
  const byId = new Map(catalog.all.map((m) => [m.id, m]));
  return {
    version: DECIDER_PROTOCOL_VERSION,
    models: catalog.all.map((m) => ({ id: m.id, lookup: m.lookup, free: isFreeModel({ model: m, variant: null }) })),
    aliases: [...catalog.aliases].map(([lookup, m]) => ({ lookup, model_id: m.id })),
    variants: [...catalog.variants.values()].flatMap((v) => {
      const model = byId.get(v.model_id);
      return model ? [{ id: v.id, lookup: v.lookup, model_id: v.model_id, variant: v.variant, free: isFreeModel({ model, variant: v }) }] : [];
    }),
    endpoints: [...catalog.endpoints].map(([model_id, list]) => ({
      model_id,
      endpoints: list.map((e) => ({ provider_slug: e.provider_slug, tag: e.tag, zdr: e.zdr, pricing: json(e.pricing) })),
    })),
  };
}

/**
 * What is left of each limit now, as routing.authorize reads it for a decision that holds nothing
 * (routing_spend()), read from the database at each call: the decider keeps it for its own
 * maximum age, so the server's own cache would only add to that.
 */
export async function deciderSpend(deps: Uses<'db' | 'now'>, _actor: PlatformActor, input: { version: number; organization_id: string; checks: LimitCheck[] }) {
  servedVersion(input.version);
  const remaining = await remainingOf(deps.db, input.organization_id, input.checks, deps.now());
  return { version: DECIDER_PROTOCOL_VERSION, remaining: [...remaining].map(([name, left]) => ({ name, remaining: left })) };
}
