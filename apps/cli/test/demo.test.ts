// `switchyard demo` end to end against a real server: it runs twice (the second run duplicates
// nothing that should be unique), then the JSON of the second run drives a call of every one of the
// 21 operations of the spec over REST, each answering 200 with the spec's shape.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type RestoredRelease, type TestServer } from '@switchyard/api/testing';
import { createSwitchyardClient } from '@switchyard/client';
import {
  AddWorkspaceMembersOutputSchema,
  AnalyticsMetaOutputSchema,
  AnalyticsQueryOutputSchema,
  ByokOutputSchema,
  GenerationFeedbackOutputSchema,
  GetBudgetOutputSchema,
  GetGenerationContentOutputSchema,
  GetGenerationOutputSchema,
  GetKeyOutputSchema,
  GetModelOutputSchema,
  ListBudgetsOutputSchema,
  ListEmbeddingsModelsOutputSchema,
  ListGuardrailKeyAssignmentsOutputSchema,
  ListGuardrailMemberAssignmentsOutputSchema,
  ListGuardrailsOutputSchema,
  ListOrganizationMembersOutputSchema,
  ListPresetVersionsOutputSchema,
  ListWorkspaceMembersOutputSchema,
  PromoteFileOutputSchema,
  GetPresetOutputSchema,
  GetPresetVersionOutputSchema,
  GuardrailOutputSchema,
  ListPresetsOutputSchema,
  ListScimGroupMappingsOutputSchema,
  ScimGroupMappingOutputSchema,
  ImageModelEndpointsSchema,
  ListImageModelsOutputSchema,
  ListUserModelsOutputSchema,
  ListVideoModelsOutputSchema,
  ListZdrEndpointsOutputSchema,
} from '@switchyard/schema';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { DemoSummary } from '../src/commands/demo.js';
import { run, VERSION } from '../src/cli.js';
import { scaled } from '@switchyard/db/testing';

/**
 * The previous release's upgrade fixture (test/fixtures/upgrade/, scripts/upgrade-fixture.sh): the
 * newest whose version is below this one's, else this release's own.
 */
function previousRelease(): { version: string; restore: RestoredRelease } {
  const dir = fileURLToPath(new URL('../../../test/fixtures/upgrade/', import.meta.url));
  const order = (v: string) => v.split('.').map(Number);
  const newer = (a: string, b: string) => {
    const [x, y] = [order(a), order(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!;
    return false;
  };
  const versions = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -'.sql'.length))
    .sort((a, b) => (newer(a, b) ? -1 : 1));
  const version = versions.find((v) => newer(VERSION, v)) ?? versions.find((v) => v === VERSION);
  if (!version) throw new Error(`no upgrade fixture for ${VERSION} or before in ${dir}: run scripts/upgrade-fixture.sh`);
  const keys = JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { management_key: string; platform_key: string; secret_key: string };
  return {
    version,
    restore: {
      sql: readFileSync(path.join(dir, `${version}.sql`), 'utf8'),
      blobs: path.join(dir, `${version}.blobs`),
      managementKey: keys.management_key,
      platformKey: keys.platform_key,
      secretKey: keys.secret_key,
    },
  };
}

let server: TestServer;

async function demo(json: boolean) {
  return switchyard(json ? ['demo', '--json'] : ['demo']);
}

async function switchyard(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: (t) => (stdout += `${t}\n`),
    stderr: (t) => (stderr += `${t}\n`),
    env: { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: server.managementKey, SWITCHYARD_PLATFORM_KEY: server.platformKey },
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

/** How many of each thing the demo must not duplicate, read through the client. */
async function uniqueCounts(workspaceId: string) {
  const admin = createSwitchyardClient({ url: server.url, apiKey: server.managementKey });
  const page = { offset: 0, limit: 100 };
  const [workspaces, members, workspaceMembers, budgets, byok, guardrails, versions, mappings, videos] = await Promise.all([
    admin.workspaces.list.query(page),
    admin.organization.members.query(page),
    admin.workspaces.members.query({ id: workspaceId, ...page }),
    admin.budgets.list.query({ id: workspaceId }),
    admin.byok.list.query({ workspace_id: workspaceId, ...page }),
    admin.guardrails.list.query({ workspace_id: workspaceId, ...page }),
    admin.presets.versions.query({ slug: 'demo-assistant', ...page }),
    admin.scim.listGroupMappings.query(page),
    admin.videos.listJobs.query({ workspace_id: workspaceId, ...page }),
  ]);
  return {
    demoWorkspaces: workspaces.data.filter((w) => w.slug === 'demo-team').length,
    members: members.total_count,
    workspaceMembers: workspaceMembers.total_count,
    budgets: budgets.data.length,
    byok: byok.total_count,
    guardrails: guardrails.total_count,
    presetVersions: versions.total_count,
    scimMappings: mappings.total_count,
    videoJobs: videos.total_count,
  };
}

/*
 * Two worlds: a fresh database, and the previous release's database (its demo data and stored
 * bytes) migrated to HEAD by the server's start. In both the demo runs
 * and every operation of the spec answers on its data.
 */
const release = previousRelease();
describe.each([
  { world: 'a fresh database', restore: undefined },
  { world: `the ${release.version} release's database, migrated to HEAD`, restore: release.restore },
])('switchyard demo on $world', ({ restore }) => {
  beforeAll(async () => {
    server = await startTestServer({ adminUrl: inject('pgAdminUrl'), template: inject('pgTemplate'), ...(restore ? { restore } : {}) });
  });
  afterAll(async () => {
    await server?.close();
  });

  let summary: DemoSummary;

  it(
    'runs twice: a human summary, then JSON; nothing unique is duplicated',
    async () => {
      const first = await demo(false);
      expect(first, first.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toContain('Demo data is ready in workspace "demo-team"');
      const firstKey = first.stdout.match(/sk-sy-v1-[0-9a-f]{64}/)?.[0];
      expect(firstKey).toBeDefined();

      const workspaceId = (
        await createSwitchyardClient({ url: server.url, apiKey: server.managementKey }).workspaces.list.query({ offset: 0, limit: 100 })
      ).data.find((w) => w.slug === 'demo-team')!.id;
      const before = await uniqueCounts(workspaceId);
      expect(before).toEqual({
        demoWorkspaces: 1,
        members: 4, // the owner and the three demo people
        workspaceMembers: 3, // the owner, Ada and Grace
        budgets: 4,
        byok: 1,
        guardrails: 2,
        presetVersions: 3,
        scimMappings: 1,
        videoJobs: 1,
      });

      const second = await demo(true);
      expect(second, second.stderr).toMatchObject({ code: 0, stderr: '' });
      summary = JSON.parse(second.stdout) as DemoSummary;
      expect(Object.keys(summary).sort()).toEqual(
        [
          'management_key',
          'key',
          'organization_id',
          'workspace_id',
          'workspace_slug',
          'user_ids_not_in_workspace',
          'model',
          'model_variant',
          'model_alias',
          'generation_id',
          'byok_id',
          'guardrail_id',
          'preset_slug',
          'scim_mapping_id',
          'container_id',
          'container_file_id',
          'video_job_id',
        ].sort(),
      );
      expect(summary).toMatchObject({ management_key: server.managementKey, workspace_id: workspaceId, workspace_slug: 'demo-team' });
      // A new key each run; everything else is the same.
      expect(summary.key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
      expect(summary.key).not.toBe(firstKey);
      expect(await uniqueCounts(workspaceId)).toEqual(before);
      expect(summary.user_ids_not_in_workspace).toHaveLength(1);
      // Two CLI runs of the whole demo (each a process and some 60 calls): a wider bound than one call's.
    },
    scaled(180_000),
  );

  describe('its JSON drives every one of the 21 operations over REST', () => {
    const call = async (path: string, key: string, init: RequestInit = {}) => {
      const res = await fetch(`${server.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
      return res;
    };
    const json = async (path: string, key: string, init: RequestInit = {}) => {
      const res = await call(path, key, init);
      const body: unknown = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      return body;
    };
    const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ws = () => encodeURIComponent(summary.workspace_slug);

    it('1. POST /containers/{container_id}/files/{file_id}/promote', async () => {
      const file = PromoteFileOutputSchema.parse(
        await json(`/containers/${summary.container_id}/files/${summary.container_file_id}/promote`, summary.management_key, { method: 'POST' }),
      );
      expect(file).toMatchObject({ _shape: 'native', filename: 'report.md', downloadable: true });
    });

    it('2. GET /key: the new regular key, with usage on several days of this month', async () => {
      const { data } = GetKeyOutputSchema.parse(await json('/key', summary.key));
      const owner = GetKeyOutputSchema.parse(await json('/key', summary.management_key)).data;
      expect(data).toMatchObject({ is_management_key: false, limit: 100, limit_reset: 'monthly', creator_user_id: owner.creator_user_id });
      expect(data.usage_daily).toBeGreaterThan(0);
      // The week (from Monday, UTC) and the month (from the 1st) both hold today: the one that starts
      // later holds the lesser usage. On the 1st of a month, the month is the shorter one, unless it
      // is a Monday.
      const now = new Date();
      const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const weekStart = today - ((now.getUTCDay() + 6) % 7) * 86_400_000;
      const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
      const [shorter, longer] = weekStart >= monthStart ? [data.usage_weekly, data.usage_monthly] : [data.usage_monthly, data.usage_weekly];
      expect(shorter).toBeGreaterThanOrEqual(data.usage_daily);
      expect(longer).toBeGreaterThanOrEqual(shorter);
      expect(data.usage).toBeGreaterThan(longer);
      expect(data.byok_usage).toBeGreaterThan(0);
      expect(data.limit_remaining).toBeCloseTo(100 - data.usage_monthly, 6);
    });

    it('3. POST /workspaces/{id}/members/add', async () => {
      const body = AddWorkspaceMembersOutputSchema.parse(
        await json(`/workspaces/${ws()}/members/add`, summary.management_key, post({ user_ids: summary.user_ids_not_in_workspace })),
      );
      expect(body.added_count).toBe(summary.user_ids_not_in_workspace.length);
      expect(body.data.map((m) => m.user_id)).toEqual(summary.user_ids_not_in_workspace);
    });

    it('4. POST /generation/feedback', async () => {
      const body = GenerationFeedbackOutputSchema.parse(
        await json('/generation/feedback', summary.management_key, post({ generation_id: summary.generation_id, category: 'latency', comment: 'demo' })),
      );
      expect(body).toEqual({ data: { success: true } });
    });

    it('5. PATCH /scim/group-mappings/{id}', async () => {
      const { data } = ScimGroupMappingOutputSchema.parse(
        await json(`/scim/group-mappings/${summary.scim_mapping_id}`, summary.management_key, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ role: 'admin' }),
        }),
      );
      expect(data).toMatchObject({ id: summary.scim_mapping_id, workspace_id: summary.workspace_id, role: 'admin' });
    });

    it('6. GET /model/{author}/{slug}: the model, its variant and its alias', async () => {
      for (const id of [summary.model, summary.model_variant, summary.model_alias]) {
        const [author, slug] = id.split('/') as [string, string];
        const { data } = GetModelOutputSchema.parse(await json(`/model/${author}/${encodeURIComponent(slug)}`, summary.key));
        expect(data.id).toMatch(/^[^/]+\/[^/]+$/);
      }
      const { data } = GetModelOutputSchema.parse(await json(`/model/${summary.model}`, summary.key));
      expect(data.id).toBe(summary.model);
    });

    it('7. GET /generation (the organization has credit: no 402)', async () => {
      const { data } = GetGenerationOutputSchema.parse(await json(`/generation?id=${summary.generation_id}`, summary.key));
      expect(data).toMatchObject({ id: summary.generation_id, workspace_id: summary.workspace_id });
      expect(data.tokens_prompt).toBeGreaterThan(0);
    });

    it('8. GET /generation/content', async () => {
      const { data } = GetGenerationContentOutputSchema.parse(await json(`/generation/content?id=${summary.generation_id}`, summary.key));
      expect(data.input.messages.length).toBeGreaterThan(0);
      expect(data.output.completion).not.toBe('');
    });

    it('9. GET /containers/{container_id}/files/{file_id}/content', async () => {
      const res = await call(`/containers/${summary.container_id}/files/${summary.container_file_id}/content`, summary.management_key);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(await res.text()).toContain('# Weekly report');
    });

    it('10. GET /videos/{jobId}/content: a real MP4 from the sample provider', async () => {
      const res = await call(`/videos/${summary.video_job_id}/content?index=0`, summary.management_key);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('video/mp4');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBeGreaterThan(0);
      expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    });

    it('11. GET /organization/members', async () => {
      const body = ListOrganizationMembersOutputSchema.parse(await json('/organization/members?offset=0&limit=100', summary.management_key));
      expect(body.data.map((m) => m.email)).toEqual(
        expect.arrayContaining(['ada@demo.switchyard.dev', 'grace@demo.switchyard.dev', 'alan@demo.switchyard.dev']),
      );
    });

    it('12. GET /workspaces/{id}/budgets/{interval}', async () => {
      for (const interval of ['daily', 'weekly', 'monthly', 'lifetime']) {
        const body = GetBudgetOutputSchema.parse(await json(`/workspaces/${summary.workspace_id}/budgets/${interval}`, summary.management_key));
        expect(body.data.reset_interval).toBe(interval);
      }
    });

    it('13. GET /byok/{id}', async () => {
      const { data } = ByokOutputSchema.parse(await json(`/byok/${summary.byok_id}`, summary.management_key));
      expect(data).toMatchObject({ id: summary.byok_id, workspace_id: summary.workspace_id, provider: 'openai' });
    });

    it('14. GET /workspaces/{id}/budgets', async () => {
      const body = ListBudgetsOutputSchema.parse(await json(`/workspaces/${ws()}/budgets`, summary.management_key));
      expect(body.data.map((b) => b.reset_interval).sort()).toEqual(['daily', 'lifetime', 'monthly', 'weekly']);
    });

    it('15. GET /analytics/meta', async () => {
      const { data } = AnalyticsMetaOutputSchema.parse(await json('/analytics/meta', summary.management_key));
      expect(data.metrics.length).toBeGreaterThan(0);
    });

    it("C1. POST /analytics/query, and `switchyard analytics query`: the demo's spend by model per day", async () => {
      const query = { metrics: ['total_usage', 'request_count'], dimensions: ['model'], granularity: 'day' };
      const { data } = AnalyticsQueryOutputSchema.parse(await json('/analytics/query', summary.management_key, post(query)));
      const days = new Set(data.data.map((row) => row.date));
      const models = new Set(data.data.map((row) => row.model));
      expect(days.size).toBeGreaterThan(10); // spread over the last 30 days (of the demo's 40)
      expect(models.size).toBeGreaterThan(1);
      expect(data.data.reduce((sum, row) => sum + (row.total_usage as number), 0)).toBeGreaterThan(0);

      const table = await switchyard(['analytics', 'query', '--metric', 'total_usage', '--dimension', 'model', '--granularity', 'day', '--days', '30']);
      expect(table, table.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(table.stdout).toMatch(/^MODEL\s+DATE\s+TOTAL_USAGE\n/);
      for (const model of models) expect(table.stdout).toContain(String(model));
      expect(table.stdout).toMatch(/\d+ row\(s\) in [\d.]+ ms/);
      const raw = await switchyard(['analytics', 'query', '--metric', 'total_usage', '--dimension', 'model', '--granularity', 'day', '--days', '30', '--json']);
      const parsed = AnalyticsQueryOutputSchema.parse(JSON.parse(raw.stdout));
      expect(new Set(parsed.data.data.map((row) => row.model))).toEqual(models);
    });

    it('16. GET /embeddings/models', async () => {
      const body = ListEmbeddingsModelsOutputSchema.parse(await json('/embeddings/models', summary.key));
      expect(body.total_count).toBeGreaterThanOrEqual(5);
    });

    it('17. GET /presets/{slug}/versions', async () => {
      const body = ListPresetVersionsOutputSchema.parse(await json(`/presets/${summary.preset_slug}/versions?limit=50&offset=0`, summary.key));
      expect(body.data.map((v) => v?.version)).toEqual([1, 2, 3]);
    });

    it('18. GET /workspaces/{id}/members', async () => {
      const body = ListWorkspaceMembersOutputSchema.parse(await json(`/workspaces/${ws()}/members?limit=50&offset=0`, summary.key));
      expect(body.total_count).toBeGreaterThanOrEqual(3);
    });

    it('19. GET /guardrails/{id}/assignments/keys', async () => {
      const body = ListGuardrailKeyAssignmentsOutputSchema.parse(await json(`/guardrails/${summary.guardrail_id}/assignments/keys`, summary.management_key));
      const key = GetKeyOutputSchema.parse(await json('/key', summary.key)).data;
      expect(body.data.map((a) => a.key_label)).toContain(key.label);
    });

    it('20. GET /guardrails', async () => {
      const body = ListGuardrailsOutputSchema.parse(await json(`/guardrails?workspace_id=${summary.workspace_id}`, summary.key));
      expect(body.data.map((g) => g.id)).toContain(summary.guardrail_id);
    });

    it('A15, A18 and A19: the guardrail, and the organization-wide assignments', async () => {
      const { data } = GuardrailOutputSchema.parse(await json(`/guardrails/${summary.guardrail_id}`, summary.management_key));
      expect(data.name).toBe('Demo: no preview models');
      const keys = ListGuardrailKeyAssignmentsOutputSchema.parse(await json('/guardrails/assignments/keys?offset=0&limit=100', summary.management_key));
      expect(keys.data.map((a) => a.guardrail_id)).toContain(summary.guardrail_id);
      const members = ListGuardrailMemberAssignmentsOutputSchema.parse(
        await json('/guardrails/assignments/members?offset=0&limit=100', summary.management_key),
      );
      expect(members.total_count).toBe(3);
    });

    it('A29 and A30: the SCIM group mappings', async () => {
      const list = ListScimGroupMappingsOutputSchema.parse(await json('/scim/group-mappings?offset=0&limit=50', summary.management_key));
      expect(list.data.map((m) => m.id)).toContain(summary.scim_mapping_id);
      const one = ScimGroupMappingOutputSchema.parse(await json(`/scim/group-mappings/${summary.scim_mapping_id}`, summary.management_key));
      expect(one.data.workspace_id).toBe(summary.workspace_id);
    });

    it('A32, A33 and A34: the presets, with the version in force', async () => {
      const list = ListPresetsOutputSchema.parse(await json('/presets?offset=0&limit=50', summary.key));
      expect(list.data.map((p) => p.slug)).toContain(summary.preset_slug);
      const { data } = GetPresetOutputSchema.parse(await json(`/presets/${summary.preset_slug}`, summary.key));
      expect(data.designated_version?.version).toBe(3);
      const first = GetPresetVersionOutputSchema.parse(await json(`/presets/${summary.preset_slug}/versions/1`, summary.key));
      expect(first.data?.version).toBe(1);
    });

    it('21. GET /guardrails/{id}/assignments/members', async () => {
      const body = ListGuardrailMemberAssignmentsOutputSchema.parse(
        await json(`/guardrails/${summary.guardrail_id}/assignments/members`, summary.management_key),
      );
      expect(body.total_count).toBe(2);
    });
  });

  describe("its catalog answers platform-api.md's catalog operations", () => {
    const json = async (path: string, key: string) => {
      const res = await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      const body: unknown = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body;
    };

    it('D1 and D2: image models, and the endpoints of each', async () => {
      const { data } = ListImageModelsOutputSchema.parse(await json('/images/models', summary.key));
      expect(data.length).toBeGreaterThanOrEqual(1);
      for (const model of data) {
        const endpoints = ImageModelEndpointsSchema.parse(await json(model.endpoints.slice('/api/v1'.length), summary.key));
        expect(endpoints.endpoints.length, model.id).toBeGreaterThanOrEqual(1);
      }
    });

    it('D3: video models', async () => {
      expect(ListVideoModelsOutputSchema.parse(await json('/videos/models', summary.key)).data.length).toBeGreaterThanOrEqual(1);
    });

    it("D4: the models the demo's key may use, narrowed by its guardrails", async () => {
      const page = ListUserModelsOutputSchema.parse(await json('/models/user?offset=0&limit=500', summary.key));
      expect(page.total_count).toBeGreaterThanOrEqual(1);
      expect(page.data.map((m) => m.id)).toContain(summary.model);
    });

    it('D5: the ZDR endpoints', async () => {
      expect(ListZdrEndpointsOutputSchema.parse(await json('/endpoints/zdr', summary.key)).data.length).toBeGreaterThanOrEqual(1);
    });
  });
});
