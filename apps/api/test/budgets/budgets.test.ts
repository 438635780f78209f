import { describe, expect, it } from 'vitest';
import {
  type BudgetInterval,
  BudgetSchema,
  DeletedOutputSchema,
  GetBudgetOutputSchema,
  ListBudgetsOutputSchema,
  SetBudgetOutputSchema,
} from '@switchyard/schema';
import { useServer } from '../fixtures.js';
import { createRegularKey, createWorkspace, expectEnvelope, rest } from '../fixtures-admin.js';
import { ok, trpc } from '../fixtures-trpc.js';

const ListSchema = ListBudgetsOutputSchema.extend({ data: BudgetSchema.strict().array() }).strict();
const GetSchema = GetBudgetOutputSchema.extend({ data: BudgetSchema.strict() }).strict();

const env = useServer();

const setBudget = (workspace_ref: string, interval: BudgetInterval, limit_usd: number, key?: string) =>
  trpc(env.server, 'budgets.set', { workspace_ref, interval, limit_usd }, { key });

describe('GET /workspaces/{id}/budgets and /budgets/{interval}', () => {
  it('list every interval in order, one budget each, with include_byok_in_budgets', async () => {
    const ws = await createWorkspace(env.server, 'budgeted');
    expect((await rest(env.server, '/workspaces/budgeted/budgets')).body).toEqual({ data: [], include_byok_in_budgets: false });
    for (const [interval, limit] of [
      ['monthly', 300],
      ['daily', 10.5],
      ['lifetime', 1000],
      ['weekly', 70],
    ] as const) {
      expect((await setBudget('budgeted', interval, limit)).status).toBe(200);
    }
    await ok(env.server, 'budgets.set', { workspace_ref: 'budgeted', interval: 'daily', limit_usd: 10.5, include_byok_in_budgets: true });

    const { status, body } = await rest(env.server, `/workspaces/${ws.id}/budgets`);
    expect(status).toBe(200);
    const list = ListSchema.parse(body);
    expect(list.include_byok_in_budgets).toBe(true);
    expect(list.data.map((b) => [b.reset_interval, b.limit_usd])).toEqual([
      ['daily', 10.5],
      ['weekly', 70],
      ['monthly', 300],
      ['lifetime', 1000],
    ]);
    expect(list.data.every((b) => b.workspace_id === ws.id)).toBe(true);

    const one = await rest(env.server, '/workspaces/budgeted/budgets/weekly');
    expect(one.status).toBe(200);
    const got = GetSchema.parse(one.body);
    expect(got).toEqual({ data: list.data[1], include_byok_in_budgets: true });
  });

  it('changing a budget updates it in place (at most one per interval)', async () => {
    await createWorkspace(env.server, 'in-place');
    const first = (await setBudget('in-place', 'daily', 5)).data.data;
    const second = (await setBudget('in-place', 'daily', 6)).data.data;
    expect(second.id).toBe(first.id);
    expect(second.limit_usd).toBe(6);
    expect(ListSchema.parse((await rest(env.server, '/workspaces/in-place/budgets')).body).data).toHaveLength(1);
  });

  it('404 for an interval without a budget; 400 for a bad interval', async () => {
    await createWorkspace(env.server, 'sparse');
    await setBudget('sparse', 'monthly', 50);
    expectEnvelope(await rest(env.server, '/workspaces/sparse/budgets/daily'), 404);
    expectEnvelope(await rest(env.server, '/workspaces/sparse/budgets/yearly'), 400);
    expectEnvelope(await rest(env.server, '/workspaces/sparse/budgets/Monthly'), 400);
  });

  it("404 for unknown workspaces and another organization's; 401 without a key; 403 for a regular key", async () => {
    await setBudget(env.other.workspaceId, 'daily', 1, env.other.managementKey);
    for (const path of ['/workspaces/nope/budgets', '/workspaces/00000000-0000-4000-8000-000000000000/budgets/daily']) {
      expectEnvelope(await rest(env.server, path), 404);
    }
    expectEnvelope(await rest(env.server, `/workspaces/${env.other.workspaceId}/budgets`), 404);
    expectEnvelope(await rest(env.server, `/workspaces/${env.other.workspaceId}/budgets/daily`), 404);
    expect((await rest(env.server, `/workspaces/${env.other.workspaceId}/budgets/daily`, { key: env.other.managementKey })).status).toBe(200);
    expectEnvelope(await rest(env.server, '/workspaces/default/budgets', { key: null }), 401);
    expectEnvelope(await rest(env.server, '/workspaces/default/budgets/daily', { key: null }), 401);
    const { key } = await createRegularKey(env.server);
    expectEnvelope(await rest(env.server, '/workspaces/default/budgets', { key }), 403);
    expectEnvelope(await rest(env.server, '/workspaces/default/budgets/daily', { key }), 403);
  });
});

describe('budgets.set: lifetime > monthly > weekly > daily, strictly', () => {
  it('refuses a budget not strictly below every wider one, or not strictly above every narrower one', async () => {
    await createWorkspace(env.server, 'ordered');
    await setBudget('ordered', 'weekly', 100);
    const equal = await setBudget('ordered', 'daily', 100);
    expect(equal.status).toBe(400);
    expect(equal.error?.message).toBe('Invalid request parameters');
    expect(equal.error?.data.metadata).toMatchObject({ conflicts: [{ reset_interval: 'weekly', limit_usd: 100 }] });
    expect(String(equal.error?.data.metadata?.reason)).toMatch(/strictly smaller/);

    expect((await setBudget('ordered', 'monthly', 99.99)).status).toBe(400);
    expect((await setBudget('ordered', 'lifetime', 100)).status).toBe(400);
    expect((await setBudget('ordered', 'daily', 99.99)).status).toBe(200);
    expect((await setBudget('ordered', 'lifetime', 100.01)).status).toBe(200);
    // Monthly must sit between weekly (100) and lifetime (100.01).
    expect((await setBudget('ordered', 'monthly', 100.001)).status).toBe(200);
    // Raising weekly above monthly names monthly and lifetime.
    const raised = await setBudget('ordered', 'weekly', 200);
    expect(raised.error?.data.metadata?.conflicts).toEqual([
      { reset_interval: 'monthly', limit_usd: 100.001 },
      { reset_interval: 'lifetime', limit_usd: 100.01 },
    ]);
    // Nothing changed by the refused calls.
    const { body } = await rest(env.server, '/workspaces/ordered/budgets');
    expect(ListSchema.parse(body).data.map((b) => b.limit_usd)).toEqual([99.99, 100, 100.001, 100.01]);
  });

  it('holds under concurrent changes (the workspace row is locked)', async () => {
    await createWorkspace(env.server, 'racing');
    // Each call alone is valid; together, daily 50 and weekly 40 would break the order.
    for (let round = 0; round < 5; round++) {
      await trpc(env.server, 'budgets.delete', { workspace_ref: 'racing', interval: 'daily' });
      await trpc(env.server, 'budgets.delete', { workspace_ref: 'racing', interval: 'weekly' });
      await setBudget('racing', 'daily', 10);
      await setBudget('racing', 'weekly', 60);
      const [a, b] = await Promise.all([setBudget('racing', 'daily', 50), setBudget('racing', 'weekly', 40)]);
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const { body } = await rest(env.server, '/workspaces/racing/budgets');
      const [daily, weekly] = ListSchema.parse(body).data.map((x) => x.limit_usd);
      expect(daily).toBeLessThan(weekly!);
    }
  });

  it('400 for zero or negative limits; 404 for foreign workspaces', async () => {
    expect((await setBudget('default', 'daily', -1)).status).toBe(400);
    expect((await setBudget('default', 'daily', 0)).status).toBe(400);
    expect((await setBudget(env.other.workspaceId, 'daily', 1)).status).toBe(404);
  });
});

const PutSchema = SetBudgetOutputSchema.extend({ data: BudgetSchema.strict() }).strict();

describe('PUT /workspaces/{workspace_ref}/budgets/{interval}', () => {
  it('200 with { data: Budget, include_byok_in_budgets }; creates, then replaces in place; by slug or UUID', async () => {
    const ws = await createWorkspace(env.server, 'put-budgets');
    const created = await rest(env.server, '/workspaces/put-budgets/budgets/monthly', { method: 'PUT', json: { limit_usd: 120 } });
    expect(created.status).toBe(200);
    expect(created.type).toMatch(/^application\/json/);
    const first = PutSchema.parse(created.body);
    expect(first).toMatchObject({ data: { workspace_id: ws.id, limit_usd: 120, reset_interval: 'monthly' }, include_byok_in_budgets: false });

    const replaced = await rest(env.server, `/workspaces/${ws.id}/budgets/monthly`, {
      method: 'PUT',
      json: { limit_usd: 150, include_byok_in_budgets: true },
    });
    expect(replaced.status).toBe(200);
    expect(PutSchema.parse(replaced.body)).toMatchObject({ data: { id: first.data.id, limit_usd: 150 }, include_byok_in_budgets: true });
    // include_byok_in_budgets is workspace-wide and stays when omitted.
    const daily = await rest(env.server, '/workspaces/put-budgets/budgets/daily', { method: 'PUT', json: { limit_usd: 5 } });
    expect(PutSchema.parse(daily.body).include_byok_in_budgets).toBe(true);
    expect(ListSchema.parse((await rest(env.server, '/workspaces/put-budgets/budgets')).body).include_byok_in_budgets).toBe(true);
    expect((await rest(env.server, '/workspaces/put-budgets')).body).toHaveProperty('data.include_byok_in_budgets', true);
  });

  it('400 for a limit that breaks the order, a limit <= 0, a missing limit or a bad interval', async () => {
    await createWorkspace(env.server, 'put-bad');
    await rest(env.server, '/workspaces/put-bad/budgets/weekly', { method: 'PUT', json: { limit_usd: 10 } });
    expectEnvelope(await rest(env.server, '/workspaces/put-bad/budgets/daily', { method: 'PUT', json: { limit_usd: 10 } }), 400);
    expectEnvelope(await rest(env.server, '/workspaces/put-bad/budgets/monthly', { method: 'PUT', json: { limit_usd: 0 } }), 400);
    expectEnvelope(await rest(env.server, '/workspaces/put-bad/budgets/monthly', { method: 'PUT', json: {} }), 400);
    expectEnvelope(await rest(env.server, '/workspaces/put-bad/budgets/yearly', { method: 'PUT', json: { limit_usd: 1 } }), 400);
  });

  it("401 without a key; 403 for a regular key; 404 for an unknown or another organization's workspace", async () => {
    const put = (path: string, key?: string | null) => rest(env.server, path, { method: 'PUT', json: { limit_usd: 1 }, key });
    expectEnvelope(await put('/workspaces/default/budgets/daily', null), 401);
    expectEnvelope(await put('/workspaces/default/budgets/daily', (await createRegularKey(env.server)).key), 403);
    expectEnvelope(await put('/workspaces/nope/budgets/daily'), 404);
    expectEnvelope(await put(`/workspaces/${env.other.workspaceId}/budgets/daily`), 404);
  });
});

describe('DELETE /workspaces/{workspace_ref}/budgets/{interval}', () => {
  it('200 { deleted: true } (bare), also when the interval had no budget; the budget is gone', async () => {
    await createWorkspace(env.server, 'del-budgets');
    await setBudget('del-budgets', 'lifetime', 5);
    const deleted = await rest(env.server, '/workspaces/del-budgets/budgets/lifetime', { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(DeletedOutputSchema.parse(deleted.body)).toEqual({ deleted: true });
    expectEnvelope(await rest(env.server, '/workspaces/del-budgets/budgets/lifetime'), 404);
    const again = await rest(env.server, '/workspaces/del-budgets/budgets/lifetime', { method: 'DELETE' });
    expect([again.status, again.body]).toEqual([200, { deleted: true }]);
  });

  it("400 for a bad interval; 401; 403 for a regular key; 404 for an unknown or another organization's workspace", async () => {
    const del = (path: string, key?: string | null) => rest(env.server, path, { method: 'DELETE', key });
    expectEnvelope(await del('/workspaces/default/budgets/yearly'), 400);
    expectEnvelope(await del('/workspaces/default/budgets/daily', null), 401);
    expectEnvelope(await del('/workspaces/default/budgets/daily', (await createRegularKey(env.server)).key), 403);
    expectEnvelope(await del('/workspaces/nope/budgets/daily'), 404);
    expectEnvelope(await del(`/workspaces/${env.other.workspaceId}/budgets/daily`), 404);
  });
});
