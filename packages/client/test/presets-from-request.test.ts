// D6–D8 through the typed client: presets.fromChat, .fromMessages and .fromResponses take the
// request body with the slug, and answer what GET /presets/{slug} answers.
import { beforeAll, describe, expect, it } from 'vitest';
import type { SwitchyardClient } from '../src/index.js';
import { failure, useServer } from './support.js';

const env = useServer();
let admin: SwitchyardClient;
beforeAll(() => {
  admin = env.client(env.server.managementKey);
});

describe('@switchyard/client: presets from inference bodies', () => {
  it('creates a preset, then designated versions, from each kind of body', async () => {
    const { data: first } = await admin.presets.fromChat.mutate({
      slug: 'from-client',
      messages: [{ role: 'user', content: 'hi' }],
      model: 'openai/gpt-4o',
      temperature: 0.1,
      stream: false,
    });
    expect(first).toMatchObject({
      slug: 'from-client',
      name: 'from-client',
      status: 'active',
      workspace_id: env.server.workspaceId,
      designated_version: { version: 1, config: { model: 'openai/gpt-4o', temperature: 0.1 }, system_prompt: null },
    });
    expect(first.designated_version_id).toBe(first.designated_version?.id);

    const { data: second } = await admin.presets.fromMessages.mutate({
      slug: 'from-client',
      model: 'anthropic/claude-sonnet-4',
      messages: null,
      system: [
        { type: 'text', text: 'One.' },
        { type: 'text', text: 'Two.' },
      ],
      thinking: { type: 'enabled', budget_tokens: 512 },
    });
    expect(second.designated_version).toMatchObject({
      version: 2,
      config: { model: 'anthropic/claude-sonnet-4', thinking: { type: 'enabled', budget_tokens: 512 } },
      system_prompt: 'One.\n\nTwo.',
    });

    const { data: third } = await admin.presets.fromResponses.mutate({ slug: 'from-client', instructions: 'Three.', input: 'hi', store: false });
    expect(third.designated_version).toMatchObject({ version: 3, config: {}, system_prompt: 'Three.' });
    expect((await admin.presets.get.query({ slug: 'from-client' })).data).toEqual(third);
  });

  it('errors: 400 for a bad slug or body, 403 for the platform key, 404 for an unreachable preset', async () => {
    expect(await failure(admin.presets.fromChat.mutate({ slug: 'no spaces', messages: [] }))).toMatchObject({ status: 400 });
    expect(await failure(admin.presets.fromResponses.mutate({ slug: 'ok', temperature: 'hot' as unknown as number }))).toMatchObject({ status: 400 });
    const platform = env.client(env.server.platformKey);
    expect(await failure(platform.presets.fromResponses.mutate({ slug: 'ok' }))).toMatchObject({ status: 403 });
    const { data: ws } = await admin.workspaces.create.mutate({ slug: 'elsewhere', name: 'Elsewhere' });
    await admin.presets.create.mutate({ slug: 'theirs', name: 'Theirs', config: {}, workspace_id: ws.id });
    const { key } = await admin.keys.create.mutate({ name: 'regular' });
    expect(await failure(env.client(key).presets.fromResponses.mutate({ slug: 'theirs' }))).toMatchObject({ status: 404 });
  });
});
