// http/rest.ts jsonOf: every answer's bytes are JSON.stringify's, however they are encoded (long
// lists in pieces, frozen answers once).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonOf } from '../src/http/rest.js';

function same(body: unknown): void {
  expect(jsonOf(body).toString('utf8')).toBe(JSON.stringify(body));
}

describe('jsonOf', () => {
  it('encodes a long list in pieces, byte for byte what JSON.stringify makes', () => {
    const item = (i: number) => ({ date: '2026-11-01', model: `m/${i}`, usage: i / 7, ok: i % 2 === 0, none: null, gone: undefined, at: new Date(i * 1000) });
    for (const n of [255, 256, 257, 64 * 4, 64 * 4 + 1, 1_000]) {
      const data = Array.from({ length: n }, (_, i) => item(i));
      same({ data });
      same({ data, total_count: n, links: { next: null } });
      same({ before: 'x', data, skipped: undefined, after: [1, 2] });
    }
    // Values JSON.stringify writes as null in an array; a body that serializes itself is left to it.
    same({ data: Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? undefined : i % 3 === 1 ? () => i : Symbol('s'))) });
    same({ data: Array.from({ length: 300 }, (_, i) => i), toJSON: () => ({ replaced: true }) });
    // Non-ASCII text counts its UTF-8 bytes.
    same({ data: Array.from({ length: 300 }, (_, i) => `é${i}😀`) });
  });

  it('matches JSON.stringify for any JSON-like answer, long lists or not', () => {
    const value = fc.jsonValue();
    fc.assert(
      fc.property(fc.record({ data: fc.array(value, { minLength: 0, maxLength: 400 }), rest: fc.dictionary(fc.string(), value) }), ({ data, rest }) =>
        same({ ...rest, data }),
      ),
      { numRuns: 200 },
    );
  });

  it('serializes a frozen answer once, and hands every request the same bytes', () => {
    const body = Object.freeze({ data: Object.freeze([Object.freeze({ id: 'a' })]) });
    const first = jsonOf(body);
    expect(first.toString()).toBe(JSON.stringify(body));
    expect(jsonOf(body)).toBe(first);
    // An answer that is not frozen is encoded anew every time.
    const open = { data: [{ id: 'a' }] };
    expect(jsonOf(open)).not.toBe(jsonOf(open));
  });
});
