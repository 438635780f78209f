// A workspace's BYOK provider credentials: list them (byok.list), store one (byok.create), delete
// one (byok.delete). The provider key is sent once and never shown: the list has its masked label.
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, Page, useLoad, useWorkspace, WorkspacePicker, when } from './ui.js';

type Credential = RouterOutputs['byok']['list']['data'][number];

export function ByokPage({ session }: { session: Session }) {
  const picker = useWorkspace(session);
  const { workspaceId } = picker;
  const load = useCallback(
    async () => (workspaceId ? (await session.client.byok.list.query({ workspace_id: workspaceId, limit: 100 })).data : null),
    [session, workspaceId],
  );
  const { data, error, reload } = useLoad(load);
  const [deleteError, setDeleteError] = useState<ServerError | null>(null);

  const remove = async (credential: Credential) => {
    setDeleteError(null);
    try {
      await session.client.byok.delete.mutate({ id: credential.id });
      await reload();
    } catch (e) {
      setDeleteError(describeError(e));
    }
  };

  return (
    <Page title="BYOK credentials">
      <WorkspacePicker {...picker} />
      {picker.error ? <ErrorMessage error={picker.error} /> : null}
      <Form
        title="Add a provider key"
        submitLabel="Add credential"
        fields={[
          { name: 'provider', label: 'Provider', required: true, hint: 'A lowercase provider slug, e.g. openai' },
          { name: 'name', label: 'Name' },
          { name: 'key', label: 'Provider key', type: 'password', required: true, hint: 'Stored encrypted; never shown again' },
        ]}
        submit={(v) =>
          session.client.byok.create.mutate({ provider: v.provider ?? '', key: v.key ?? '', name: v.name || null, workspace_id: workspaceId ?? undefined })
        }
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      {deleteError ? <ErrorMessage error={deleteError} /> : null}
      <DataTable
        testId="byok"
        caption="Credentials usable in the workspace, in routing order (the organization-wide ones too)"
        rows={data}
        rowKey={(c) => c.id}
        columns={[
          { header: 'Provider', cell: (c) => c.provider },
          { header: 'Name', cell: (c) => c.name ?? '', className: 'name' },
          { header: 'Key', cell: (c) => <code>{c.label}</code> },
          { header: 'Scope', cell: (c) => (c.workspace_id ? 'this workspace' : 'every workspace') },
          { header: 'State', cell: (c) => (c.disabled ? 'disabled' : 'enabled') },
          { header: 'Created', cell: (c) => when(c.created_at) },
          {
            header: 'Actions',
            hidden: true,
            cell: (c) => (
              <button type="button" onClick={() => void remove(c)} aria-label={`Delete the ${c.provider} credential ${c.label}`}>
                Delete
              </button>
            ),
          },
        ]}
      />
    </Page>
  );
}
