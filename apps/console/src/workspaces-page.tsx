// The organization's workspaces: list them (workspaces.list), create one (workspaces.create).
import { useCallback } from 'react';
import type { Session } from './session.js';
import { DataTable, ErrorMessage, Form, Page, useLoad, when } from './ui.js';

export function WorkspacesPage({ session }: { session: Session }) {
  const load = useCallback(async () => (await session.client.workspaces.list.query({ limit: 100 })).data, [session]);
  const { data, error, reload } = useLoad(load);
  return (
    <Page title="Workspaces">
      <Form
        title="Create a workspace"
        submitLabel="Create workspace"
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'slug', label: 'Slug', required: true, hint: 'Lowercase letters, digits and inner dashes' },
          { name: 'description', label: 'Description' },
        ]}
        submit={(v) => session.client.workspaces.create.mutate({ name: v.name ?? '', slug: v.slug ?? '', description: v.description || null })}
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      <DataTable
        testId="workspaces"
        caption="The organization's workspaces, oldest first"
        rows={data}
        rowKey={(w) => w.id}
        columns={[
          { header: 'Name', cell: (w) => w.name, className: 'name' },
          { header: 'Slug', cell: (w) => <code>{w.slug}</code> },
          { header: 'Description', cell: (w) => w.description ?? '', className: 'name' },
          { header: 'Default', cell: (w) => (w.is_default ? 'yes' : 'no') },
          { header: 'Created', cell: (w) => when(w.created_at) },
        ]}
      />
    </Page>
  );
}
