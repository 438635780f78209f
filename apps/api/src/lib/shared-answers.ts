// Answers that many requests share, as they are (the catalog's, built once per snapshot:
// models/catalog-cache.ts snapshotAnswer): deep-frozen copies, marked so that the REST layer
// serializes each once (http/rest.ts jsonOf).

const shared = new WeakSet<object>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * A deep-frozen copy of `answer` (JSON-like: plain objects, arrays, primitives), marked as shared.
 * A copy, so that nothing it was built from (e.g. the snapshot's rows, whose JSON values a zod parse
 * passes through by reference) is frozen with it.
 */
export function shareAnswer<T extends object>(answer: T): T {
  const copy = deepFreeze(structuredClone(answer));
  shared.add(copy);
  return copy;
}

/** Whether `value` was made by shareAnswer: it, and all it holds, can never change. */
export function isSharedAnswer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && shared.has(value);
}
