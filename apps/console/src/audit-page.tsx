// The organization's audit log (audit.list): newest first, filtered by actor (a key's hash),
// action and target, each change shown as its before and after. The filter is in the URL's query,
// so a filtered view can be shared.
import type { RouterInputs, RouterOutputs } from '@switchyard/client';
import { useCallback, useEffect, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { DataTable, ErrorMessage, Form, Page, type Values, when } from './ui.js';

type Entry = RouterOutputs['audit']['list']['data'][number];
type Filter = Omit<RouterInputs['audit']['list'], 'cursor' | 'limit'>;

const FILTERS = ['actor', 'action', 'target_type', 'target_id'] as const;

function filterOf(values: Values): Filter {
  const filter: Record<string, string> = {};
  for (const name of FILTERS) {
    const value = values[name]?.trim();
    if (value) filter[name] = value;
  }
  return filter;
}

function filterFromUrl(): Values {
  const query = new URLSearchParams(window.location.search);
  return Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? '']));
}

export function AuditPage({ session }: { session: Session }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [filter, setFilter] = useState<Filter | null>(null);
  const [error, setError] = useState<ServerError | null>(null);
  const [initial] = useState(filterFromUrl);

  const search = useCallback(
    async (next: Filter) => {
      const page = await session.client.audit.list.query({ ...next, limit: 50 });
      setFilter(next);
      setEntries(page.data);
      setCursor(page.cursor);
      setError(null);
      const query = new URLSearchParams(next as Record<string, string>).toString();
      window.history.replaceState(null, '', `${window.location.pathname}${query ? `?${query}` : ''}`);
    },
    [session],
  );

  const older = async () => {
    if (!cursor || !filter) return;
    try {
      const page = await session.client.audit.list.query({ ...filter, limit: 50, cursor });
      setEntries((shown) => [...(shown ?? []), ...page.data]);
      setCursor(page.cursor);
    } catch (e) {
      setError(describeError(e));
    }
  };

  // The first page, with the URL's filter.
  useEffect(() => {
    search(filterOf(initial)).catch((e: unknown) => {
      setFilter({});
      setEntries([]);
      setError(describeError(e));
    });
  }, [search, initial]);

  return (
    <Page title="Audit log">
      <Form
        title="Filter"
        submitLabel="Filter"
        keep
        fields={[
          { name: 'actor', label: 'Actor (key hash)', initial: initial.actor, hint: "The acting key's 64-character hash" },
          { name: 'action', label: 'Action', initial: initial.action, hint: 'e.g. keys.update' },
          { name: 'target_type', label: 'Target type', initial: initial.target_type, hint: 'e.g. key, workspace' },
          { name: 'target_id', label: 'Target id', initial: initial.target_id },
        ]}
        submit={(v) => search(filterOf(v))}
      />
      {error ? <ErrorMessage error={error} /> : null}
      <DataTable
        testId="audit"
        caption="Changes, newest first"
        empty="No entry matches."
        rows={entries}
        rowKey={(e) => e.id}
        columns={[
          { header: 'When', cell: (e) => when(e.created_at) },
          {
            header: 'Actor',
            cell: (e) => (
              <>
                {e.actor.kind} {e.actor.label ? <code>{e.actor.label}</code> : null}
                {e.actor.user_id ? <span className="muted"> user {e.actor.user_id}</span> : null}
              </>
            ),
          },
          { header: 'Action', cell: (e) => <code>{e.action}</code>, className: 'nowrap' },
          {
            header: 'Target',
            cell: (e) => (
              <>
                {e.target.type} {e.target.id ? <code>{e.target.id}</code> : null}
              </>
            ),
            className: 'name',
          },
          { header: 'Change', cell: (e) => <Change entry={e} /> },
        ]}
      />
      {cursor ? (
        <button type="button" onClick={() => void older()}>
          Older entries
        </button>
      ) : null}
    </Page>
  );
}

const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value, null, 2));

function Change({ entry }: { entry: Entry }) {
  const { before, after, ...rest } = entry.changes as { before?: unknown; after?: unknown };
  return (
    <details data-testid="change">
      <summary>Before and after</summary>
      <div className="change">
        <div>
          <p className="label">Before</p>
          <pre data-testid="before">{shown(before)}</pre>
        </div>
        <div>
          <p className="label">After</p>
          <pre data-testid="after">{shown(after)}</pre>
        </div>
        {Object.keys(rest).length > 0 ? (
          <div>
            <p className="label">Also</p>
            <pre>{shown(rest)}</pre>
          </div>
        ) : null}
      </div>
    </details>
  );
}
