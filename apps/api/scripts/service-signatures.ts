// `pnpm --filter @switchyard/api service-signatures`: the parameter lists of the exported functions of
// the services (src/modules/**/*.service.ts), and those that break the one signature
// `(deps, actor, input)` (docs/decisions/0037). test/http/service-signatures.test.ts fails on a break; this
// prints the count of distinct parameter lists, by name, and each break.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** The types a service's actor may have: who acts (access/callers.ts, modules/scim). */
const ACTOR_TYPES = new Set(['Actor', 'PlatformActor', 'Caller', 'ScimCaller', 'AnonymousCaller']);

export interface ServiceFunction {
  /** The file, relative to src/. */
  file: string;
  name: string;
  /** Each parameter's name and type, as written. */
  parameters: { name: string; type: string }[];
}

/** Every exported function of every service file under src/modules. */
export function serviceFunctions(src = SRC): ServiceFunction[] {
  const files = readdirSync(join(src, 'modules'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.service.ts'))
    .sort();
  const found: ServiceFunction[] = [];
  for (const f of files) {
    const path = join(src, 'modules', f);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const add = (name: string, parameters: ts.NodeArray<ts.ParameterDeclaration>) =>
      found.push({
        file: relative(src, path),
        name,
        parameters: parameters.map((p) => ({ name: p.name.getText(source), type: p.type?.getText(source) ?? '' })),
      });
    for (const node of source.statements) {
      if (!ts.canHaveModifiers(node) || !ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      if (ts.isFunctionDeclaration(node) && node.name) add(node.name.text, node.parameters);
      if (ts.isVariableStatement(node)) {
        for (const d of node.declarationList.declarations) {
          const init = d.initializer;
          if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) add(d.name.getText(source), init.parameters);
        }
      }
    }
  }
  return found;
}

/** Why a function breaks the signature, or null when it keeps it. */
export function signatureBreak(fn: ServiceFunction): string | null {
  // A service that does not read its actor (work of the platform's) names it `_actor`, as the linter asks of an unused parameter.
  const names = fn.parameters.map((p) => (p.name === '_actor' ? 'actor' : p.name));
  const expected = ['deps', 'actor', 'input'].slice(0, Math.max(2, names.length));
  if (names.length < 2 || names.length > 3 || names.some((n, i) => n !== expected[i])) {
    return `takes (${names.join(', ')}), not (deps, actor, input) or (deps, actor)`;
  }
  const [deps, actor] = fn.parameters as [ServiceFunction['parameters'][number], ServiceFunction['parameters'][number]];
  if (!/^Uses<.+>$/s.test(deps.type) && deps.type !== 'ServiceDeps') return `deps is ${deps.type || 'untyped'}, not Uses<...> or ServiceDeps`;
  if (!actor.type.split('|').every((t) => ACTOR_TYPES.has(t.trim()))) return `actor is ${actor.type || 'untyped'}, not one of ${[...ACTOR_TYPES].join(', ')}`;
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const functions = serviceFunctions();
  const lists = new Set(functions.map((f) => f.parameters.map((p) => p.name).join(', ')));
  const broken = functions.flatMap((f) => {
    const why = signatureBreak(f);
    return why ? [`${f.file} ${f.name}: ${why}`] : [];
  });
  console.log(`${functions.length} exported service functions, ${lists.size} distinct parameter lists, ${broken.length} off the signature`);
  for (const line of broken) console.log(`  ${line}`);
}
