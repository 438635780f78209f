// A populated organization for the hostile-input tests: one of every resource the 21 operations
// read, a regular key, a second workspace, and a foreign organization. Every platform step (catalog
// import, recording, opening a container, writing a container file, creating a video job) goes
// through platformCall() / platformPut(), so that switching them to the platform key is one edit.
import { randomUUID } from 'node:crypto';
import { SAMPLE_VIDEO_URL } from '@switchyard/schema';
import type { TestServer } from '../src/testing/test-server.js';
import { hashApiKey } from '../src/access/key-format.js';
import { createOrganization, type OrgFixture } from './fixtures.js';
import { createMember, createRegularKey, createWorkspace } from './fixtures-admin.js';
import { demoCatalog } from './fixtures-catalog.js';
import { fileIdOf, putFile } from './fixtures-files.js';
import { ok, type InputOf, type ProcedurePath } from './fixtures-trpc.js';

/** The one way this file takes platform steps (tRPC procedures of the platform plane). */
export const platformCall = <P extends ProcedurePath>(server: TestServer, procedure: P, input: InputOf<P>) =>
  ok(server, procedure, input, { key: server.platformKey });

/** The one way this file writes container files (PUT /internal/..., a platform route, in the server's organization). */
export const platformPut = (server: TestServer, containerId: string, path: string, body: Uint8Array) =>
  putFile(server, containerId, fileIdOf(path), body, { key: server.platformKey, contentType: 'text/plain' });

export interface World {
  other: OrgFixture;
  regularKey: string;
  workspaceId: string;
  secondWorkspaceId: string;
  generationId: string;
  containerId: string;
  fileId: string;
  videoJobId: string;
  guardrailId: string;
  otherGuardrailId: string;
  byokId: string;
  /** A webhook destination of the organization (with a header secret). */
  destinationId: string;
  presetSlug: string;
  scimMappingId: string;
  userIdNotInWorkspace: string;
}

export async function buildWorld(server: TestServer): Promise<World> {
  const other = await createOrganization(server.db);
  const regular = await createRegularKey(server);
  const me = await server.db.organization.findFirstOrThrow({ where: { id: { not: other.organizationId } } });
  const workspaceId = me.default_workspace_id!;
  const second = await createWorkspace(server, 'second');
  const member = await createMember(server, `${randomUUID().slice(0, 8)}@example.com`);

  await platformCall(server, 'models.import', demoCatalog);
  const generationId = `gen-world-${randomUUID()}`;
  await platformCall(server, 'generations.record', {
    id: generationId,
    api_key_hash: hashApiKey(server.managementKey),
    model: 'openai/gpt-4o',
    usage: 0,
    content: { input: { messages: [{ role: 'user', content: 'hi' }] }, output: { completion: 'hello' } },
  });
  await platformCall(server, 'generations.addCredits', { organization_id: server.organizationId, amount: 1000 });

  const container = await platformCall(server, 'files.openContainer', {
    session_key: 'world',
    workspace_id: workspaceId,
  });
  const containerId = container.data.container_id;
  const put = await platformPut(server, containerId, 'out/report.txt', new TextEncoder().encode('report'));
  if (put.status !== 201) throw new Error(`platformPut: ${put.status} ${await put.text()}`);
  const video = await platformCall(server, 'videos.createJob', {
    workspace_id: workspaceId,
    provider: 'demo',
    model: 'demo/video',
    upstream_job_id: 'world',
    outputs: [{ upstream_url: SAMPLE_VIDEO_URL }],
  });

  const { data: guardrail } = await ok(server, 'guardrails.create', { name: 'world' });
  const { data: otherGuardrail } = await ok(server, 'guardrails.create', { name: 'second', workspace_id: second.id });
  await ok(server, 'guardrails.assignKeys', { id: guardrail.id, key_hashes: [regular.hash] });
  await ok(server, 'guardrails.assignMembers', { id: guardrail.id, member_user_ids: [member.id] });
  const { data: byok } = await ok(server, 'byok.create', { provider: 'openai', name: 'world', key: 'sk-world-provider-key-0001' });
  const { data: destination } = await ok(server, 'destinations.create', {
    type: 'webhook',
    name: 'world',
    config: { url: 'https://hooks.example.com/world', headers: { Authorization: 'Bearer world-0123456789' } },
  });
  await ok(server, 'presets.create', { slug: 'world', name: 'world', config: { model: 'openai/gpt-4o', temperature: 0.2 } });
  const mapping = await ok(server, 'scim.createGroupMapping', { workspace_id: 'default', scim_group_id: randomUUID(), role: 'member' });
  const newcomer = await createMember(server, `${randomUUID().slice(0, 8)}@example.com`);
  return {
    other,
    regularKey: regular.key,
    workspaceId,
    secondWorkspaceId: second.id,
    generationId,
    containerId,
    fileId: fileIdOf('out/report.txt'),
    videoJobId: video.data.id,
    guardrailId: guardrail.id,
    otherGuardrailId: otherGuardrail.id,
    byokId: byok.id,
    destinationId: destination.id,
    presetSlug: 'world',
    scimMappingId: mapping.data.id,
    userIdNotInWorkspace: newcomer.id,
  };
}
