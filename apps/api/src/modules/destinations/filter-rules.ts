// A destination's filter rules (platform-api.md 3.1, 3.3), judged against one generation: a group
// matches when all (`and`, also for an unknown logic) or any (`or`) of its rules match; an event is
// sent when the filter is disabled, or every group matches. Numeric operators compare numbers,
// string operators strings; `regex` is a search with RE2 semantics (re2js: linear time, so a
// tenant's pattern cannot hold the dispatcher for longer than its input takes to read). A rule this
// server cannot judge (an unknown operator, a number that is not one) does not match: the filter
// then sends less, never more, than its owner asked for.
import { RE2JS } from 're2js';
import type { FilterRules } from '@switchyard/schema';

/** The fields rules may name (platform-api.md 3.1); absent ones are undefined. */
export type FilterFields = Partial<Record<string, string | number | null>>;

/** Why a pattern does not compile under the engine that judges it, or null. */
export function patternProblem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

type Rule = FilterRules['groups'][number]['rules'][number];

const present = (value: unknown): value is string | number => value !== undefined && value !== null && value !== '';

function numeric(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Judges rules with compiled patterns kept (one dispatch round judges many events by the same rules). */
export class FilterJudge {
  readonly #patterns = new Map<string, RE2JS | null>();

  #pattern(source: string): RE2JS | null {
    if (!this.#patterns.has(source)) {
      let compiled: RE2JS | null = null;
      try {
        compiled = RE2JS.compile(source);
      } catch {
        compiled = null;
      }
      this.#patterns.set(source, compiled);
    }
    return this.#patterns.get(source)!;
  }

  rule(rule: Rule, fields: FilterFields): boolean {
    const value = fields[rule.field];
    const wanted = rule.value;
    switch (rule.operator) {
      case 'exists':
        return present(value);
      case 'not_exists':
        return !present(value);
      case 'gt':
      case 'lt':
      case 'gte':
      case 'lte': {
        const a = numeric(value);
        const b = numeric(wanted);
        if (a === null || b === null) return false;
        return rule.operator === 'gt' ? a > b : rule.operator === 'lt' ? a < b : rule.operator === 'gte' ? a >= b : a <= b;
      }
      case 'equals':
      case 'not_equals': {
        let equal: boolean;
        if (!present(value) || wanted === undefined) equal = false;
        else if (typeof value === 'number') equal = numeric(wanted) === value;
        else equal = value === String(wanted);
        return rule.operator === 'equals' ? equal : !equal;
      }
      case 'contains':
      case 'not_contains': {
        const found = present(value) && wanted !== undefined && String(value).includes(String(wanted));
        return rule.operator === 'contains' ? found : !found;
      }
      case 'starts_with':
        return present(value) && wanted !== undefined && String(value).startsWith(String(wanted));
      case 'ends_with':
        return present(value) && wanted !== undefined && String(value).endsWith(String(wanted));
      case 'regex': {
        if (!present(value) || wanted === undefined) return false;
        const pattern = this.#pattern(String(wanted));
        return pattern !== null && pattern.matcher(String(value)).find();
      }
      default:
        return false;
    }
  }

  /** Whether an event with these fields is sent under `rules` (null: no filter). */
  passes(rules: FilterRules | null, fields: FilterFields): boolean {
    if (!rules || rules.enabled === false) return true;
    return rules.groups.every((group) =>
      group.logic === 'or' ? group.rules.some((rule) => this.rule(rule, fields)) : group.rules.every((rule) => this.rule(rule, fields)),
    );
  }
}
