// The organization's keys (the default workspace's, disabled ones too): list, create one with a
// name and a limit (its secret shown once, kept in this page's state only), disable one.
import type { RouterOutputs } from '@switchyard/client';
import { useCallback, useEffect, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { ErrorMessage, Form, numberOf, usd } from './ui.js';

type Key = RouterOutputs['keys']['list']['data'][number];

export function KeysPage({ session }: { session: Session }) {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [error, setError] = useState<ServerError | null>(null);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);

  const load = useCallback(async () => {
    try {
      const answer = await session.client.keys.list.query({ include_disabled: true });
      setKeys(answer.data);
      setError(null);
    } catch (e) {
      setError(describeError(e));
    }
  }, [session]);

  useEffect(() => {
    void load();
  }, [load]);

  const disable = async (key: Key) => {
    try {
      await session.client.keys.update.mutate({ hash: key.hash, disabled: true });
      await load();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      <CreateKey
        session={session}
        onCreated={(name, key) => {
          setSecret({ name, key });
          void load();
        }}
      />
      {secret ? (
        <div className="secret" role="status" data-testid="new-secret">
          <p>
            The secret of <strong>{secret.name}</strong>. Copy it now: it is not shown again.
          </p>
          <code>{secret.key}</code>
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      ) : null}
      {error ? <ErrorMessage error={error} /> : null}
      {keys === null ? (
        <p className="status">Loading keys…</p>
      ) : (
        <table data-testid="keys">
          <caption>Keys of the default workspace, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Limit</th>
              <th scope="col">Used</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.hash} data-hash={key.hash}>
                <td className="name">{key.name}</td>
                <td>
                  <code>{key.label}</code>
                  {key.hash === session.keyHash ? ' (this session)' : ''}
                  {key.is_management_key ? ' management' : ''}
                </td>
                <td>{usd(key.limit)}</td>
                <td>{usd(key.usage)}</td>
                <td>{key.disabled ? 'disabled' : 'enabled'}</td>
                <td>
                  {key.disabled ? null : (
                    <button type="button" onClick={() => void disable(key)} aria-label={`Disable ${key.name}`}>
                      Disable
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateKey({ session, onCreated }: { session: Session; onCreated: (name: string, key: string) => void }) {
  return (
    <Form
      title="Create a key"
      submitLabel="Create"
      fields={[
        { name: 'name', label: 'Name', required: true },
        { name: 'limit', label: 'Limit (USD, empty for none)', type: 'number', min: '0', step: '0.01' },
      ]}
      submit={async (v) => {
        const created = await session.client.keys.create.mutate({ name: v.name ?? '', limit: numberOf(v.limit ?? '') });
        onCreated(created.data.name, created.key);
      }}
    />
  );
}
