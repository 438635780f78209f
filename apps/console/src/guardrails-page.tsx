// A workspace's guardrails: list them (guardrails.list) with the keys assigned to each
// (guardrails.allKeyAssignments), create one (guardrails.create), and assign a key of the workspace
// to one (guardrails.assignKeys, the keys from keys.list).
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useId, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, listOf, numberOf, Page, usd, useLoad, useWorkspace, WorkspacePicker } from './ui.js';

type Guardrail = RouterOutputs['guardrails']['list']['data'][number];
type Key = RouterOutputs['keys']['list']['data'][number];
type Assignment = RouterOutputs['guardrails']['allKeyAssignments']['data'][number];
type Interval = NonNullable<Guardrail['reset_interval']>;

export function GuardrailsPage({ session }: { session: Session }) {
  const picker = useWorkspace(session);
  const { workspaceId } = picker;
  const load = useCallback(async () => {
    if (!workspaceId) return null;
    const [guardrails, keys, assignments] = await Promise.all([
      session.client.guardrails.list.query({ workspace_id: workspaceId, limit: 100 }),
      session.client.keys.list.query({ workspace_id: workspaceId, limit: 100 }),
      session.client.guardrails.allKeyAssignments.query({ limit: 100 }),
    ]);
    return { guardrails: guardrails.data, keys: keys.data, assignments: assignments.data };
  }, [session, workspaceId]);
  const { data, error, reload } = useLoad(load);

  return (
    <Page title="Guardrails">
      <WorkspacePicker {...picker} />
      {picker.error ? <ErrorMessage error={picker.error} /> : null}
      <Form
        title="Create a guardrail"
        submitLabel="Create guardrail"
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'limit_usd', label: 'Limit (USD, empty for none)', type: 'number', step: '0.01', min: '0' },
          {
            name: 'reset_interval',
            label: 'Limit resets',
            type: 'select',
            options: [
              { value: '', label: 'never' },
              { value: 'daily', label: 'daily' },
              { value: 'weekly', label: 'weekly' },
              { value: 'monthly', label: 'monthly' },
            ],
          },
          { name: 'allowed_models', label: 'Allowed models', hint: 'Comma-separated model ids; empty for every model' },
        ]}
        submit={(v) => {
          const limit = numberOf(v.limit_usd ?? '');
          return session.client.guardrails.create.mutate({
            name: v.name ?? '',
            workspace_id: workspaceId ?? undefined,
            ...(limit === null ? {} : { limit_usd: limit, reset_interval: v.reset_interval ? (v.reset_interval as Interval) : null }),
            allowed_models: listOf(v.allowed_models ?? ''),
          });
        }}
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      <DataTable
        testId="guardrails"
        caption="The workspace's guardrails and the keys assigned to them"
        rows={data?.guardrails ?? null}
        rowKey={(g) => g.id}
        columns={[
          { header: 'Name', cell: (g) => g.name, className: 'name' },
          { header: 'Limit', cell: (g) => `${usd(g.limit_usd)}${g.reset_interval ? ` ${g.reset_interval}` : ''}` },
          { header: 'Allowed models', cell: (g) => (g.allowed_models ?? ['every model']).join(', '), className: 'name' },
          {
            header: 'Keys',
            cell: (g) => (
              <Assignments
                session={session}
                guardrail={g}
                keys={data?.keys ?? []}
                assigned={(data?.assignments ?? []).filter((a) => a.guardrail_id === g.id)}
                onChanged={() => void reload()}
              />
            ),
          },
        ]}
      />
    </Page>
  );
}

function Assignments({
  session,
  guardrail,
  keys,
  assigned,
  onChanged,
}: {
  session: Session;
  guardrail: Guardrail;
  keys: Key[];
  assigned: Assignment[];
  onChanged: () => void;
}) {
  const free = keys.filter((k) => !assigned.some((a) => a.key_hash === k.hash));
  const [hash, setHash] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ServerError | null>(null);
  const id = useId();
  const chosen = hash || free[0]?.hash || '';
  const assign = async () => {
    setBusy(true);
    setError(null);
    try {
      await session.client.guardrails.assignKeys.mutate({ id: guardrail.id, key_hashes: [chosen] });
      setHash('');
      onChanged();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      {assigned.length > 0 ? (
        <ul className="plain">
          {assigned.map((a) => (
            <li key={a.id}>
              {a.key_name} <code>{a.key_label}</code>
            </li>
          ))}
        </ul>
      ) : (
        <p className="status">No key assigned.</p>
      )}
      {free.length > 0 ? (
        <div className="inline">
          <label htmlFor={id} className="visually-hidden">
            Key to assign to {guardrail.name}
          </label>
          <select id={id} value={chosen} onChange={(e) => setHash(e.target.value)} disabled={busy}>
            {free.map((k) => (
              <option key={k.hash} value={k.hash}>
                {k.name} ({k.label})
              </option>
            ))}
          </select>
          <button type="button" onClick={() => void assign()} disabled={busy} aria-label={`Assign the key to ${guardrail.name}`}>
            Assign
          </button>
        </div>
      ) : null}
      {error ? <ErrorMessage error={error} /> : null}
    </div>
  );
}
