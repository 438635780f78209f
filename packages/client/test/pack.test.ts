// The package as others get it: `pnpm pack` (of the build, which turbo runs before these tests),
// installed into an empty project outside the repository (from pnpm's store, the registry when
// missing), where a call type-checks and runs against a real server. The consumer's tsconfig skips
// library checking, as most projects do; its @ts-expect-error lines fail the compile if the
// package's types were missing (they would be any, and the directives unused). The routing rules
// the package carries (dist/rules/) run there too.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from './support.js';

const exec = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const env = useServer();

let project: string;
beforeAll(async () => {
  project = await fs.mkdtemp(path.join(os.tmpdir(), 'switchyard-client-consumer-'));
});
afterAll(async () => {
  if (project) await fs.rm(project, { recursive: true, force: true });
});

const CONSUMER = `import { containerFileId, createGenerationRecorder, createSwitchyardClient, SwitchyardError, type ContainerFile, type RecordedGeneration, type RouterOutputs } from '@switchyard/client';

import { createDecider, type Decider } from '@switchyard/client/decider';

const sy = createSwitchyardClient({ url: process.env.SWITCHYARD_URL!, apiKey: process.env.SWITCHYARD_API_KEY! });
const { data } = await sy.keys.current.query();
const label: string = data.label;
const daily: RouterOutputs['keys']['current']['data']['usage_daily'] = data.usage_daily;
const file: ContainerFile | undefined = undefined;
// @ts-expect-error keys.create needs a name
void (() => sy.keys.create.mutate({}));
// @ts-expect-error no such procedure
void (() => sy.keys.destroy.mutate({ hash: 'x' }));
const recorder = createGenerationRecorder({ url: process.env.SWITCHYARD_URL!, apiKey: process.env.SWITCHYARD_API_KEY!, lingerMs: 2 });
// @ts-expect-error a generation needs its model
void (() => recorder.record({ id: 'g', api_key_hash: 'f' }));
const wasNew = (answer: RecordedGeneration): boolean => answer.recorded;
void wasNew;
await recorder.close();
let refused = 0;
try {
  await createSwitchyardClient({ url: process.env.SWITCHYARD_URL!, apiKey: 'sk-sy-v1-wrong' }).keys.current.query();
} catch (error) {
  if (error instanceof SwitchyardError) refused = error.status;
}
// The decider, from its subpath: it loads the snapshot, follows the stream, and decides here.
// @ts-expect-error a decider needs a platform key
void (() => createDecider({ url: process.env.SWITCHYARD_URL! }));
const decider: Decider = await createDecider({ url: process.env.SWITCHYARD_URL!, platformKey: process.env.SWITCHYARD_PLATFORM_KEY! });
const decided = await decider.authorize({ api_key_hash: '0'.repeat(64), model: 'openai/gpt-4o' });
const local = decider.metrics().decisions.map((d) => d.source);
decider.close();
console.log(JSON.stringify({ label, daily, file: file ?? null, refused, fileId: containerFileId('out/a.txt'), decided: decided.allowed ? 'allowed' : decided.code, local }));
`;

/** Decides, with the rules the packed client carries, for a hash no key has. */
const RULES_CONSUMER = (rules: string) => `
const { decideWith, REFUSAL_ORDER } = await import(${JSON.stringify(rules)});
const asked = [];
const outcome = decideWith({ model: 'openai/gpt-4o', estimated_cost: 0, explain: true, now: new Date() }, (need) => {
  asked.push(need.need);
  return null;
});
console.log(JSON.stringify({ order: REFUSAL_ORDER.slice(0, 7), asked, refusal: outcome.refusal, trace: outcome.trace }));
`;

describe('@switchyard/client packed', () => {
  it('installs into an empty project outside the repository, type-checks a call there, and the call works', async () => {
    const { stdout: packed } = await exec('pnpm', ['pack', '--pack-destination', project], { cwd: packageDir });
    const tarball = packed.trim().split('\n').at(-1)!;
    // The server's version, which every package carries.
    const { version } = JSON.parse(await fs.readFile(new URL('../../../apps/api/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(path.basename(tarball)).toBe(`switchyard-client-${version}.tgz`);
    const listing = (await exec('tar', ['tzf', tarball])).stdout.split('\n');
    expect(listing).toContain('package/dist/router.d.ts');
    expect(listing.some((f) => f.startsWith('package/src/'))).toBe(false);
    // The routing rules ride along, built, for a decider in the router's own process.
    expect(listing).toEqual(expect.arrayContaining(['package/dist/rules/index.js', 'package/dist/rules/index.d.ts', 'package/dist/rules/decide.js']));

    await fs.writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await exec('pnpm', ['add', '--ignore-workspace', '--prefer-offline', tarball, 'typescript@5.9.3', '@types/node@20.19.43'], { cwd: project });
    // Nothing of the server came along (the decider's one dependency besides tRPC is eventsource).
    const installed = await fs.readdir(path.join(project, 'node_modules', '.pnpm'));
    expect(installed.filter((name) => /^@switchyard\+(api|db|schema)|^@prisma|^express@|^pino@/.test(name))).toEqual([]);

    await fs.writeFile(path.join(project, 'index.ts'), CONSUMER);
    await fs.writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          outDir: 'out',
          types: ['node'],
          skipLibCheck: true,
        },
        include: ['index.ts'],
      }),
    );
    await exec(process.execPath, [path.join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project]).catch((e: { stdout: string }) => {
      throw new Error(`the consumer does not type-check:\n${e.stdout}`);
    });

    const { stdout } = await exec(process.execPath, [path.join(project, 'out', 'index.js')], {
      cwd: project,
      env: { ...process.env, SWITCHYARD_URL: env.server.url, SWITCHYARD_API_KEY: env.server.managementKey, SWITCHYARD_PLATFORM_KEY: env.server.platformKey },
    });
    expect(JSON.parse(stdout)).toEqual({
      label: expect.stringMatching(/^sk-sy-v1-.{3}\.\.\..{3}$/),
      daily: 0,
      file: null,
      refused: 401,
      fileId: 'cfile_b3V0L2EudHh0',
      decided: 'key_unknown',
      local: ['local'],
    });

    // The rules run from the installed package alone (nothing of the workspace is installed there).
    const rules = pathToFileURL(path.join(project, 'node_modules', '@switchyard', 'client', 'dist', 'rules', 'index.js')).href;
    const { stdout: decided } = await exec(process.execPath, ['--input-type=module', '-e', RULES_CONSUMER(rules)], { cwd: project });
    expect(JSON.parse(decided)).toEqual({
      order: ['key_unknown', 'key_deleted', 'key_disabled', 'key_expired', 'organization_disabled', 'model_not_found', 'model_not_allowed'],
      asked: ['key'],
      refusal: { status: 401, code: 'key_unknown', message: 'This API key is not known. Check the key, or create one.', retry_after_s: null },
      trace: [{ rule: 'decision', said: 'refused: key_unknown (401)' }],
    });
  });
});
