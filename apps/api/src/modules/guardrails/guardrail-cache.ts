// The guardrails that apply to a key (its workspace's guardrails assigned to the key or to its
// user), kept in memory for at most `ttlMs`. GET /model checks them on every request; read from
// PostgreSQL each time, that check was the route's only query (measured:
// docs/decisions/0009-guardrail-check-cached.md). Guardrail and assignment writes through this
// process forget the organization's entries at once; writes anywhere else as soon as their
// notification arrives (cache-events.ts: "guardrails:<organization id>"), and within `ttlMs` even
// if it is lost.
import { parsedJson, queryRows, statement, type Db } from '@switchyard/db';
import { z } from 'zod';
import type { Actor } from '../../access/callers.js';
import { TtlCache } from '../../cache.js';
import type { CacheCounter } from '../../metrics.js';

const APPLICABLE_GUARDRAILS = statement(
  `
  SELECT g.id, g.allowed_models, g.ignored_models FROM guardrails g
  WHERE g.organization_id = $1 AND g.workspace_id = $2::uuid
    AND (EXISTS (SELECT 1 FROM guardrail_key_assignments a WHERE a.guardrail_id = g.id AND a.api_key_id = $3::uuid)
      OR EXISTS (SELECT 1 FROM guardrail_member_assignments m WHERE m.guardrail_id = g.id AND m.user_id = $4))`,
  z.object({ id: z.string(), allowed_models: parsedJson, ignored_models: parsedJson }),
);

export type ApplicableGuardrail = z.infer<typeof APPLICABLE_GUARDRAILS.row>;

interface Entry {
  organizationId: string;
  guardrails: readonly ApplicableGuardrail[];
}

export class GuardrailCache {
  readonly #entries: TtlCache<string, Entry>;

  constructor(ttlMs: number, counter?: CacheCounter) {
    this.#entries = new TtlCache(ttlMs, 10_000, () => true, counter);
  }

  /** The guardrails that apply to the actor's key. */
  async applicable(db: Db, actor: Actor): Promise<readonly ApplicableGuardrail[]> {
    const params = [actor.organizationId, actor.workspaceId, actor.key.id, actor.userId] as const;
    const entry = await this.#entries.get(params.join(' '), async () => ({
      organizationId: actor.organizationId,
      guardrails: await queryRows(db, APPLICABLE_GUARDRAILS, [...params]),
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
