// The client's types are the router's: wrong inputs are compile errors, and outputs carry the
// schema's types. vitest runs these lines as no-ops; `tsc` checks them (`pnpm typecheck`, which
// `pnpm test` runs), so a wrong type here fails the suite.
import { describe, expectTypeOf, it } from 'vitest';
import type { ContainerFile as ServerContainerFile, File, Key } from '@switchyard/schema';
import { createSwitchyardClient, type ContainerFile, type RouterInputs, type RouterOutputs, type SwitchyardClient } from '../src/index.js';

describe('client types', () => {
  it('outputs are the records of @switchyard/schema', () => {
    expectTypeOf<RouterOutputs['keys']['current']>().toEqualTypeOf<{ data: Key }>();
    expectTypeOf<RouterOutputs['keys']['create']['key']>().toBeString();
    // Promote answers the File record itself, not { data: File } (compat.md).
    expectTypeOf<RouterOutputs['files']['promote']>().toEqualTypeOf<File>();
    expectTypeOf<ReturnType<typeof createSwitchyardClient>>().toEqualTypeOf<SwitchyardClient>();
    // The client declares the upload route's answer itself (it is not a procedure): the same type.
    expectTypeOf<ContainerFile>().toEqualTypeOf<ServerContainerFile>();
  });

  it('inputs are checked', () => {
    expectTypeOf<RouterInputs['keys']['create']>().toHaveProperty('name').toEqualTypeOf<string>();
    expectTypeOf<RouterInputs['keys']['update']['limit']>().toEqualTypeOf<number | null | undefined>();
    const client = createSwitchyardClient({ url: 'http://127.0.0.1:1', apiKey: 'x' });
    // Never called: these lines only have to compile, or fail to.
    const compileOnly = () => {
      // @ts-expect-error name must be a string
      void client.keys.create.mutate({ name: 42 });
      // @ts-expect-error limit_reset is daily, weekly or monthly
      void client.keys.create.mutate({ name: 'x', limit_reset: 'yearly' });
      // @ts-expect-error keys.current is a query, not a mutation
      void client.keys.current.mutate();
      // @ts-expect-error no such procedure
      void client.keys.destroy.mutate({ hash: 'x' });
    };
    expectTypeOf(compileOnly).toBeFunction();
  });
});
