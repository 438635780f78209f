// What any input must be before a schema even looks at it: values PostgreSQL can store, nested no
// deeper than any schema allows. Checked once per call, generically (the tRPC guard and the raw
// express routes call it), so that no field can forget it:
//   - NUL (U+0000): text and jsonb columns refuse it ("invalid byte sequence", "unsupported Unicode
//     escape sequence"), in values and in object keys alike;
//   - lone UTF-16 surrogates: not Unicode text; jsonb refuses their escapes and UTF-8 encoding would
//     silently replace them;
//   - nesting deeper than MAX_INPUT_DEPTH: no schema of ours nests that deep, and deep values reach
//     recursive code (serialisers, Prisma's JSON handling) that would run out of stack.
// The walk is iterative, so a 10,000-deep value costs a loop, not the stack.

/** Arrays and objects nested deeper than this are refused (the deepest schema needs about 6). */
export const MAX_INPUT_DEPTH = 64;

export interface InputProblem {
  /** Where: dotted path of keys and indexes ("" for the value itself). */
  path: string;
  reason: 'contains a NUL character' | 'contains a lone UTF-16 surrogate' | 'nested too deeply';
}

const SUSPECT = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Paths are echoed to the client (error.metadata): keep them short. */
const clip = (path: string) => (path.length > 200 ? `${path.slice(0, 200)}...` : path);

/** Why a string cannot be stored, or null. */
export function unstorableText(text: string): InputProblem['reason'] | null {
  if (!SUSPECT.test(text)) return null;
  if (text.includes('\u0000')) return 'contains a NUL character';
  return LONE_SURROGATE.test(text) ? 'contains a lone UTF-16 surrogate' : null;
}

/** The first problem found in a JSON-like value (strings, keys, nesting), or null when there is none. */
export function unstorableInput(value: unknown, maxDepth = MAX_INPUT_DEPTH): InputProblem | null {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value === 'string') {
      const reason = unstorableText(item.value);
      if (reason) return { path: clip(item.path), reason };
      continue;
    }
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth >= maxDepth) return { path: clip(item.path), reason: 'nested too deeply' };
    const prefix = item.path ? `${item.path}.` : '';
    if (Array.isArray(item.value)) {
      item.value.forEach((element, index) => {
        stack.push({ value: element, depth: item.depth + 1, path: `${prefix}${index}` });
      });
      continue;
    }
    for (const [key, element] of Object.entries(item.value)) {
      const reason = unstorableText(key);
      if (reason) return { path: clip(`${prefix}${JSON.stringify(key)}`), reason };
      stack.push({ value: element, depth: item.depth + 1, path: `${prefix}${key}` });
    }
  }
  return null;
}
