// The organization's presets: list them (presets.list), create one with its first version
// (presets.create), and delete a preset's version in force (presets.get for its number, then
// presets.deleteVersion; no operation deletes a whole preset).
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, Page, useLoad, when } from './ui.js';

type Preset = RouterOutputs['presets']['list']['data'][number];

export function PresetsPage({ session }: { session: Session }) {
  const load = useCallback(async () => (await session.client.presets.list.query({ limit: 100 })).data, [session]);
  const { data, error, reload } = useLoad(load);
  const [deleteError, setDeleteError] = useState<ServerError | null>(null);

  const removeVersion = async (preset: Preset) => {
    setDeleteError(null);
    try {
      const { data: full } = await session.client.presets.get.query({ slug: preset.slug });
      if (!full.designated_version) return;
      await session.client.presets.deleteVersion.mutate({ slug: preset.slug, version: full.designated_version.version });
      await reload();
    } catch (e) {
      setDeleteError(describeError(e));
    }
  };

  return (
    <Page title="Presets">
      <Form
        title="Create a preset"
        submitLabel="Create preset"
        fields={[
          { name: 'slug', label: 'Slug', required: true, hint: 'URL-safe characters only' },
          { name: 'name', label: 'Name', required: true },
          { name: 'model', label: 'Model', path: 'config.model', hint: 'e.g. openai/gpt-4o-mini' },
          { name: 'system_prompt', label: 'System prompt', type: 'textarea' },
        ]}
        submit={(v) =>
          session.client.presets.create.mutate({
            slug: v.slug ?? '',
            name: v.name ?? '',
            config: v.model ? { model: v.model } : {},
            ...(v.system_prompt ? { system_prompt: v.system_prompt } : {}),
          })
        }
        onDone={() => void reload()}
      />
      {error ? <ErrorMessage error={error} /> : null}
      {deleteError ? <ErrorMessage error={deleteError} /> : null}
      <DataTable
        testId="presets"
        caption="The organization's presets, most recently updated first"
        rows={data}
        rowKey={(p) => p.id}
        columns={[
          { header: 'Slug', cell: (p) => <code>{p.slug}</code> },
          { header: 'Name', cell: (p) => p.name, className: 'name' },
          { header: 'Status', cell: (p) => p.status },
          { header: 'Version in force', cell: (p) => (p.designated_version_id ? 'yes' : 'none (every version deleted)') },
          { header: 'Updated', cell: (p) => when(p.updated_at) },
          {
            header: 'Actions',
            hidden: true,
            cell: (p) =>
              p.designated_version_id ? (
                <button type="button" onClick={() => void removeVersion(p)} aria-label={`Delete the version in force of ${p.slug}`}>
                  Delete version
                </button>
              ) : null,
          },
        ]}
      />
    </Page>
  );
}
