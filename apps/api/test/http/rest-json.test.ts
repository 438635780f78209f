// http/rest.ts jsonOf: every answer's bytes are JSON.stringify's, however they are encoded (long
// lists in pieces, shared answers once).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonOf } from '../../src/http/rest.js';
import { shareAnswer } from '../../src/lib/shared-answers.js';

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
    // Holes, a sibling whose toJSON reads its key, a getter, and what is not a plain answer.
    same({ data: new Array(300), sibling: { toJSON: (key: string) => `member ${key}` } });
    same({
      ...{ n: 1 },
      get data() {
        return Array.from({ length: 300 }, (_, i) => i);
      },
    });
    same(
      Object.assign(
        Array.from({ length: 300 }, (_, i) => i),
        { data: Array.from({ length: 300 }, (_, i) => i) },
      ),
    );
    same({
      data: Object.assign(
        Array.from({ length: 300 }, (_, i) => i),
        { toJSON: () => 'list' },
      ),
    });
    same(
      new (class Page {
        data = Array.from({ length: 300 }, (_, i) => i);
      })(),
    );
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

  it('serializes a shared answer once, and hands every request the same bytes', () => {
    const built = { data: [{ id: 'a', nested: { n: 1 } }] };
    const body = shareAnswer(built);
    expect(body).toEqual(built);
    // A deep-frozen copy: what it was built from stays as it was.
    expect(body).not.toBe(built);
    expect(Object.isFrozen(body.data[0]?.nested)).toBe(true);
    expect(Object.isFrozen(built.data[0]?.nested)).toBe(false);
    const first = jsonOf(body);
    expect(first.toString()).toBe(JSON.stringify(body));
    expect(jsonOf(body)).toBe(first);
    // Any other answer is encoded anew every time, frozen or not.
    const frozen = Object.freeze({ data: [{ id: 'a' }] });
    expect(jsonOf(frozen)).not.toBe(jsonOf(frozen));
  });
});
