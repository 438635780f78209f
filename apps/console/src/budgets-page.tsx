// A workspace's budgets: list them (budgets.list), set one interval's (budgets.set), delete one
// (budgets.delete). The workspace is picked from the organization's (workspaces.list).
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, numberOf, Page, usd, useLoad, useWorkspace, WorkspacePicker, when } from './ui.js';

type Budget = RouterOutputs['budgets']['list']['data'][number];
const INTERVALS = ['daily', 'weekly', 'monthly', 'lifetime'] as const;

export function BudgetsPage({ session }: { session: Session }) {
  const picker = useWorkspace(session);
  const { workspaceId } = picker;
  const load = useCallback(async () => (workspaceId ? await session.client.budgets.list.query({ id: workspaceId }) : null), [session, workspaceId]);
  const { data, error, reload } = useLoad(load);
  const [deleteError, setDeleteError] = useState<ServerError | null>(null);

  const remove = async (budget: Budget) => {
    setDeleteError(null);
    try {
      await session.client.budgets.delete.mutate({ workspace_ref: budget.workspace_id, interval: budget.reset_interval });
      await reload();
    } catch (e) {
      setDeleteError(describeError(e));
    }
  };

  return (
    <Page title="Budgets">
      <WorkspacePicker {...picker} />
      {picker.error ? <ErrorMessage error={picker.error} /> : null}
      <Form
        title="Set a budget"
        submitLabel="Set budget"
        fields={[
          { name: 'interval', label: 'Interval', type: 'select', options: INTERVALS.map((i) => ({ value: i, label: i })) },
          { name: 'limit_usd', label: 'Limit (USD)', type: 'number', step: '0.01', min: '0', required: true },
        ]}
        submit={(v) =>
          session.client.budgets.set.mutate({
            workspace_ref: workspaceId ?? '',
            interval: v.interval as Budget['reset_interval'],
            limit_usd: numberOf(v.limit_usd ?? '') as number,
          })
        }
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      {deleteError ? <ErrorMessage error={deleteError} /> : null}
      {data ? <p className="status">BYOK spend {data.include_byok_in_budgets ? 'counts' : 'does not count'} toward these budgets.</p> : null}
      <DataTable
        testId="budgets"
        caption="The workspace's budgets"
        rows={data?.data ?? null}
        rowKey={(b) => b.id}
        columns={[
          { header: 'Interval', cell: (b) => b.reset_interval },
          { header: 'Limit', cell: (b) => usd(b.limit_usd) },
          { header: 'Updated', cell: (b) => when(b.updated_at) },
          {
            header: 'Actions',
            hidden: true,
            cell: (b) => (
              <button type="button" onClick={() => void remove(b)} aria-label={`Delete the ${b.reset_interval} budget`}>
                Delete
              </button>
            ),
          },
        ]}
      />
    </Page>
  );
}
