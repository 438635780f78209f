// The spend limits that apply to a request, narrowest first, as routing.authorize checks them (from
// memory through routing_spend(), or holding a cost through routing_reserve()); the bench's database
// floor builds the same (through statements.ts).
import type { ApiKey } from '@switchyard/db';
import type { GuardrailCache } from '../guardrails/guardrail-cache.js';
import type { WorkspaceRouting } from './routing.service.js';
import { type Interval, type LimitCheck, sinceOf } from './spend.js';

/**
 * The spend limits that apply, narrowest first: the key's (its spend and that of the keys minted
 * from it), its makers' (a minted key spends from every limit above it), each guardrail's, each
 * budget, the credit balance.
 */
export function limitChecks(
  key: ApiKey,
  guardrails: Awaited<ReturnType<GuardrailCache['applicable']>>,
  workspace: WorkspaceRouting,
  paid: boolean,
  now: Date,
): LimitCheck[] {
  const checks: LimitCheck[] = [];
  if (key.limit !== null) {
    const interval: Interval = key.limit_reset ?? 'lifetime';
    checks.push({
      name: 'key',
      scope: 'keys',
      keys: [key.id],
      since: sinceOf(interval, now),
      byok: key.include_byok_in_limit,
      limit: key.limit.toString(),
      interval,
    });
  }
  if (key.minted_by_key_id !== null) {
    // The makers' own limits and windows are read with the spend (routing_spend, scope "makers").
    checks.push({ name: 'makers', scope: 'makers', keys: [key.id], since: null, byok: false, limit: '0', interval: 'lifetime' });
  }
  for (const g of guardrails) {
    if (g.reset_interval === null) continue;
    checks.push({
      name: `guardrail:${g.id}`,
      scope: 'guardrail',
      guardrail_id: g.id,
      workspace_id: key.workspace_id,
      is_default: g.is_default,
      since: sinceOf(g.reset_interval, now),
      byok: g.include_byok_in_budgets,
      limit: g.limit_usd,
      interval: g.reset_interval,
    });
  }
  for (const b of workspace.budgets) {
    checks.push({
      name: `budget:${b.interval}`,
      scope: 'workspace',
      workspace_id: key.workspace_id,
      since: sinceOf(b.interval, now),
      byok: workspace.includeByokInBudgets,
      limit: b.limit,
      interval: b.interval,
    });
  }
  if (paid) checks.push({ name: 'credits', scope: 'credits', since: null, byok: false, limit: '0', interval: 'lifetime' });
  return checks;
}
