// The README's "Try it" through the typed client: run it from the repository root, after
// `pnpm -s switchyard demo --json > demo.json` (which also builds @switchyard/client):
//   node demo/typed-client.mjs
// It reads demo.json from the current directory and calls the server at SWITCHYARD_URL
// (default http://127.0.0.1:8080), as the CLI does.
import { readFileSync } from 'node:fs';
import { createSwitchyardClient } from '@switchyard/client';

// biome-ignore lint/suspicious/noUndeclaredEnvVars: a script run by hand, not a turbo task
const url = process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8080';
const demo = JSON.parse(readFileSync('demo.json', 'utf8'));

const sy = createSwitchyardClient({ url, apiKey: demo.key });
const { data: key } = await sy.keys.current.query(); // GET /key
const { data: generation } = await sy.generations.get.query({ id: demo.generation_id }); // GET /generation
console.log(`key ${key.label}: ${key.usage} USD spent, ${key.usage_daily} today`);
console.log(`generation ${generation.id}: ${generation.model}, ${generation.total_cost} USD`);

const admin = createSwitchyardClient({ url, apiKey: demo.management_key });
await admin.workspaces.addMembers.mutate({ id: demo.workspace_slug, user_ids: demo.user_ids_not_in_workspace }); // POST /workspaces/{id}/members/add
console.log(`added ${demo.user_ids_not_in_workspace.length} member(s) to ${demo.workspace_slug}`);
