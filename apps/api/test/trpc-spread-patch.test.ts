// patches/@trpc__server@11.25.2.patch replaces @trpc/server's object-spread helper (the compiler's
// `_objectSpread2`, which every middleware layer calls twice per procedure call) with one built on
// native object spread. This checks that the installed package carries the patch, that the patched
// helper copies exactly what object spread copies, and the patch's two assumptions about the calls
// in the package: each starts from a fresh object (the patched helper returns a new object rather than
// filling its first argument), and what it passes first (when not a call of the helper) and in the
// even positions, which the original helper copied by descriptor, is an object literal without
// getters or setters (a spread copies its properties as the same data properties).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const dist = path.dirname(createRequire(import.meta.url).resolve('@trpc/server'));
const files = readdirSync(dist).filter((name) => name.endsWith('.mjs') || name.endsWith('.cjs'));
const helperFiles = files.filter((name) => readFileSync(path.join(dist, name), 'utf8').includes('function _objectSpread2('));

type Spread = (target: object, ...sources: unknown[]) => Record<PropertyKey, unknown>;

/** A call of the helper: `_objectSpread2(...)` or `require_getErrorShape._objectSpread2(...)`. */
function isHelperCall(node: ts.Node): node is ts.CallExpression {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  return (ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '') === '_objectSpread2';
}

/**
 * Every call of the helper in `text` (a built file of the package), with its arguments, parsed by
 * TypeScript's parser.
 */
function helperCalls(name: string, text: string): ts.NodeArray<ts.Expression>[] {
  const calls: ts.NodeArray<ts.Expression>[] = [];
  const visit = (node: ts.Node): void => {
    if (isHelperCall(node)) calls.push(node.arguments);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS));
  return calls;
}

/** An object literal whose properties are all data properties (no getter, no setter). */
const isDataLiteral = (node: ts.Expression): boolean =>
  ts.isObjectLiteralExpression(node) && node.properties.every((property) => !ts.isGetAccessorDeclaration(property) && !ts.isSetAccessorDeclaration(property));

async function helperOf(name: string): Promise<Spread> {
  const file = path.join(dist, name);
  if (name.endsWith('.cjs')) return (createRequire(import.meta.url)(file) as { _objectSpread2: Spread })._objectSpread2;
  const alias = /\b_objectSpread2 as (\w+)/.exec(readFileSync(file, 'utf8'))?.[1];
  if (!alias) throw new Error(`${name} does not export _objectSpread2`);
  return ((await import(pathToFileURL(file).href)) as Record<string, Spread>)[alias]!;
}

describe('@trpc/server object-spread patch', () => {
  it('is applied to both builds of the helper', () => {
    expect(helperFiles.map((name) => path.extname(name)).sort()).toEqual(['.cjs', '.mjs']);
    for (const name of helperFiles) expect(readFileSync(path.join(dist, name), 'utf8')).toContain('e = { ...e, ...arguments[r] };');
  });

  it('is called only as the compiler calls it: on a fresh object, with literals of data in even positions', () => {
    let calls = 0;
    for (const name of files) {
      for (const args of helperCalls(name, readFileSync(path.join(dist, name), 'utf8'))) {
        calls++;
        // The first is a fresh object (a literal, or a call of the helper, itself checked as a call);
        // the even ones (2, 4, ...) literals. No literal holds a getter or setter.
        const where = `${name}: _objectSpread2(${args.map((arg) => arg.getText().slice(0, 30)).join(', ')})`;
        expect(isHelperCall(args[0]!) || isDataLiteral(args[0]!), where).toBe(true);
        for (let i = 2; i < args.length; i += 2) expect(isDataLiteral(args[i]!), `${where}, argument ${i}`).toBe(true);
      }
    }
    expect(calls).toBeGreaterThan(30);
  });

  for (const name of helperFiles) {
    it(`copies what object spread copies (${name})`, async () => {
      const spread = await helperOf(name);
      const symbol = Symbol('s');
      const hidden = Symbol('hidden');
      let reads = 0;
      const source: Record<PropertyKey, unknown> = { a: 1, 2: 'two', b: { nested: true }, [symbol]: 'sym' };
      Object.defineProperty(source, 'getter', { enumerable: true, get: () => ++reads });
      Object.defineProperty(source, 'quiet', { enumerable: false, value: 'no' });
      Object.defineProperty(source, hidden, { enumerable: false, value: 'no' });
      const inherited = Object.create({ fromProto: 1 }) as Record<string, unknown>;
      inherited.own = 'yes';
      const hostile = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;

      const cases: [object, unknown[], object][] = [
        [{}, [source], { ...source }],
        [{}, [inherited], { ...inherited }],
        [{}, [hostile], { ...hostile }],
        [{}, [null], {}],
        [{}, [undefined], {}],
        [{}, ['ab'], { ...Object('ab') }],
      ];
      for (const [target, sources, expected] of cases) {
        const got = spread(target, ...sources);
        expect(Reflect.ownKeys(got)).toEqual(Reflect.ownKeys(expected));
        for (const key of Reflect.ownKeys(expected)) {
          const { value, ...attributes } = Object.getOwnPropertyDescriptor(expected, key)!;
          // The getter counts its reads: each copy holds the value it read.
          expect(Object.getOwnPropertyDescriptor(got, key)).toEqual({ ...attributes, value: key === 'getter' ? expect.any(Number) : value });
        }
      }
      // A getter is read, and its value copied.
      expect(Object.getOwnPropertyDescriptor(spread({}, source), 'getter')).toMatchObject({ value: expect.any(Number), writable: true });
      expect(reads).toBeGreaterThan(0);
      // A "__proto__" key stays an own property; the prototype is untouched.
      const copied = spread({}, hostile);
      expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
      expect(Object.hasOwn(copied, '__proto__')).toBe(true);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();

      // `{ ...a, b: 1, c: 2 }`, as the compiler writes it: later keys win, in their first position.
      const a = { c: 'old', d: 4, b: 'old' };
      const merged = spread(spread({}, a), {}, { b: 1, c: 2 });
      expect(merged).toEqual({ ...a, b: 1, c: 2 });
      expect(Object.keys(merged)).toEqual(Object.keys({ ...a, b: 1, c: 2 }));
      // A literal in an even position (data only, as every call passes): the same data properties.
      const literal = spread(spread({}, a), {}, { d: undefined, next() {} });
      expect(Object.getOwnPropertyDescriptor(literal, 'd')).toEqual({ value: undefined, writable: true, enumerable: true, configurable: true });
      expect(Object.keys(literal)).toEqual(['c', 'd', 'b', 'next']);
    });
  }
});
