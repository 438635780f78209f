// One service signature (docs/decisions/0037): every exported function of a
// service file takes `(deps, actor, input)`, or `(deps, actor)` when it has no input; `deps` is typed
// `Uses<...>` (or ServiceDeps) and the actor is who acts. Helpers that are not services (a row's
// shape, a statement) live beside them in files of their own. `pnpm --filter @switchyard/api
// service-signatures` prints the same check and the count of parameter lists.
import { describe, expect, it } from 'vitest';
import { serviceFunctions, signatureBreak } from '../../scripts/service-signatures.js';

describe('service signatures', () => {
  const functions = serviceFunctions();

  it('finds the services', () => {
    expect(functions.length).toBeGreaterThan(50);
  });

  it('every exported function of a service file takes (deps, actor, input)', () => {
    const broken = functions.flatMap((f) => {
      const why = signatureBreak(f);
      return why ? [`${f.file} ${f.name}: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('the check refuses what breaks the signature', () => {
    /** The check of a function whose parameters are written `name: type`. */
    const check = (...parameters: string[]) =>
      signatureBreak({
        file: 'x.service.ts',
        name: 'f',
        parameters: parameters.map((p) => {
          const [name = '', type = ''] = p.split(': ');
          return { name, type };
        }),
      });
    expect(check("deps: Uses<'db'>", 'actor: Actor', 'input: X')).toBeNull();
    expect(check('deps: ServiceDeps', 'actor: PlatformActor | Actor')).toBeNull();
    expect(check("deps: Uses<'db'>", '_actor: PlatformActor', 'input: X')).toBeNull();
    expect(check('db: Db', 'actor: Actor', 'input: X')).toMatch(/takes \(db, actor, input\)/);
    expect(check("deps: Uses<'db'>", 'actor: Actor', 'input: X', 'now: Date')).toMatch(/takes/);
    expect(check("deps: Uses<'db'>", '_input: X')).toMatch(/takes \(deps, _input\)/);
    expect(check('deps: Db', 'actor: Actor')).toMatch(/deps is Db/);
    expect(check("deps: Uses<'db'>", 'actor: string')).toMatch(/actor is string/);
    expect(check("deps: Uses<'db'>")).toMatch(/takes \(deps\)/);
  });
});
