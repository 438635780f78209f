// The guardrails that apply to a key (its workspace's guardrails assigned to the key or to its
// user, else the workspace's default guardrail), kept in memory for at most `ttlMs`. GET /model
// and routing.authorize check them on every request; read from PostgreSQL each time, that check was
// the route's only query (measured: docs/decisions/0009-guardrail-check-cached.md). Guardrail and
// assignment writes through this process forget the organization's entries at once; writes
// anywhere else as soon as their notification arrives (cache-events.ts: "guardrails:<organization
// id>"), and within `ttlMs` even if it is lost.
import { parsedJson, queryRows, type Db } from '@switchyard/db';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { tenantStatement, tenantValues } from '../../access/tenancy.js';
import { TtlCache } from '../../lib/cache.js';
import { defaultGuardrailId } from './default-guardrail.js';
import type { CacheCounter } from '../../lib/metrics.js';

/** A guardrail's row as the routing rules read it: what routing decisions and the decider's snapshot select. */
export const GuardrailPolicyRow = z.object({
  id: z.string(),
  allowed_models: parsedJson,
  ignored_models: parsedJson,
  allowed_providers: parsedJson,
  ignored_providers: parsedJson,
  allowed_data_regions: parsedJson,
  enforce_zdr: z.boolean(),
  enforce_zdr_anthropic: z.boolean().nullable(),
  enforce_zdr_openai: z.boolean().nullable(),
  enforce_zdr_google: z.boolean().nullable(),
  enforce_zdr_xai: z.boolean().nullable(),
  enforce_zdr_other: z.boolean().nullable(),
  limit_usd: z.string(),
  reset_interval: z.enum(['daily', 'weekly', 'monthly']).nullable(),
  include_byok_in_budgets: z.boolean(),
});

/**
 * The guardrails that apply to a key: those of its workspace assigned to the key or to its user;
 * a key with neither is governed by its workspace's default guardrail (:default_guardrail_id), once that exists
 * (admin-api.md A14, A16), as routing_spend() counts its spend.
 */
const APPLICABLE_GUARDRAILS = tenantStatement(
  'organization',
  (tenant) => `
  WITH assigned AS (
    SELECT g.* FROM guardrails g
    WHERE ${tenant.where('g')} AND g.workspace_id = :workspace_id::uuid
      AND (EXISTS (SELECT 1 FROM guardrail_key_assignments a WHERE a.guardrail_id = g.id AND a.api_key_id = :key_id::uuid)
        OR EXISTS (SELECT 1 FROM guardrail_member_assignments m WHERE m.guardrail_id = g.id AND m.user_id = :user_id))
  ), applicable AS (
    SELECT * FROM assigned
    UNION ALL
    SELECT g.* FROM guardrails g
    WHERE g.id = :default_guardrail_id::uuid AND ${tenant.where('g')} AND g.workspace_id = :workspace_id::uuid AND NOT EXISTS (SELECT 1 FROM assigned)
  )
  SELECT id, allowed_models, ignored_models, allowed_providers, ignored_providers, allowed_data_regions,
         enforce_zdr, enforce_zdr_anthropic, enforce_zdr_openai, enforce_zdr_google, enforce_zdr_xai, enforce_zdr_other,
         limit_usd::text AS limit_usd, reset_interval::text AS reset_interval, include_byok_in_budgets, id = :default_guardrail_id::uuid AS is_default
  FROM applicable ORDER BY id`,
  GuardrailPolicyRow.extend({ is_default: z.boolean() }),
);

export type ApplicableGuardrail = z.infer<typeof APPLICABLE_GUARDRAILS.row>;

interface Entry {
  organizationId: string;
  guardrails: readonly ApplicableGuardrail[];
}

export class GuardrailCache {
  readonly #entries: TtlCache<string, Entry>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#entries = new TtlCache(ttlMs, 10_000, () => true, counter, ttlMs / 4);
  }

  /**
   * The guardrails that apply to the actor's key. Entries are keyed by what the statement's values
   * derive from, so that a hit computes none of them (the default guardrail's id is a SHA-1: a
   * twentieth of routing.authorize's CPU per decision when it was computed on every call).
   */
  async applicable(db: Db, actor: Actor): Promise<readonly ApplicableGuardrail[]> {
    const key = `${actor.organizationId} ${actor.workspaceId} ${actor.key.id} ${actor.userId}`;
    const entry = await this.#entries.get(key, async () => ({
      organizationId: actor.organizationId,
      guardrails: await queryRows(
        db,
        APPLICABLE_GUARDRAILS,
        tenantValues(APPLICABLE_GUARDRAILS, actor, {
          workspace_id: actor.workspaceId,
          key_id: actor.key.id,
          user_id: actor.userId,
          default_guardrail_id: defaultGuardrailId(actor.workspaceId),
        }),
      ),
    }));
    return entry.guardrails;
  }

  /** After a guardrail or an assignment of the organization changed (here or elsewhere). */
  forgetOrganization(organizationId: string): void {
    this.#entries.deleteWhere((entry) => entry.organizationId === organizationId);
  }

  /** Forgets everything. */
  clear(): void {
    this.#entries.clear();
  }
}
