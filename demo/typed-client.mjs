// The README's "Try it" through the typed client: run it from the repository root, after
// `pnpm -s switchyard demo --json > demo.json` (which also builds @switchyard/client):
//   node demo/typed-client.mjs
// It reads demo.json from the current directory and calls the server where the CLI would:
// SWITCHYARD_URL, else http://127.0.0.1:$PORT when PORT is set, else http://127.0.0.1:8080.
// A failure is one line on stderr and exit code 1, never a stack trace.
import { readFileSync } from 'node:fs';
import { createSwitchyardClient, SwitchyardError } from '@switchyard/client';

const { SWITCHYARD_URL, PORT } = process.env;
const url = SWITCHYARD_URL || (PORT ? `http://127.0.0.1:${PORT}` : 'http://127.0.0.1:8080');

function fail(message) {
  console.error(`typed-client: ${message}`);
  process.exit(1);
}

let demo;
try {
  demo = JSON.parse(readFileSync('demo.json', 'utf8'));
} catch (error) {
  fail(
    error.code === 'ENOENT'
      ? 'no demo.json in this directory: run `pnpm -s switchyard demo --json > demo.json` first (from the repository root)'
      : `demo.json is not the demo's JSON (${error.message}): run \`pnpm -s switchyard demo --json > demo.json\` again`,
  );
}

try {
  const sy = createSwitchyardClient({ url, apiKey: demo.key });
  const { data: key } = await sy.keys.current.query(); // GET /key
  const { data: generation } = await sy.generations.get.query({ id: demo.generation_id }); // GET /generation
  console.log(`key ${key.label}: ${key.usage} USD spent, ${key.usage_daily} today`);
  console.log(`generation ${generation.id}: ${generation.model}, ${generation.total_cost} USD`);

  const admin = createSwitchyardClient({ url, apiKey: demo.management_key });
  const added = await admin.workspaces.addMembers.mutate({ id: demo.workspace_slug, user_ids: demo.user_ids_not_in_workspace }); // POST /workspaces/{id}/members/add
  const asked = demo.user_ids_not_in_workspace.length;
  const skipped = asked - added.added_count;
  console.log(`added ${added.added_count} member(s) to ${demo.workspace_slug}${skipped > 0 ? ` (${skipped} of the ${asked} asked for already in it)` : ''}`);
} catch (error) {
  if (!(error instanceof SwitchyardError)) throw error;
  if (error.status === 0) {
    fail(
      `cannot reach ${url}: ${error.cause?.cause?.message ?? error.cause?.message ?? error.message}. Is the server running (pnpm start)? Set SWITCHYARD_URL, or PORT, to where it listens`,
    );
  }
  fail(`${url} answered ${error.status} ${error.message}${error.metadata ? ` ${JSON.stringify(error.metadata)}` : ''}`);
}
