// The caller's own session (sessions.current), the one view every role has, and signing out of
// every session of the person that the session's authority covers (sessions.signOutEverywhere).
import { useCallback, useState } from 'react';
import { describeError, type ServerError, type Session } from './session.js';
import { ErrorMessage, Page, useLoad, when } from './ui.js';

export function SessionPage({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const { data, error } = useLoad(useCallback(() => session.client.sessions.current.query(), [session]));
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<ServerError | null>(null);
  const everywhere = async () => {
    setBusy(true);
    try {
      await session.client.sessions.signOutEverywhere.mutate();
      onSignedOut();
    } catch (e) {
      setFailed(describeError(e));
      setBusy(false);
    }
  };
  const current = data?.session;
  return (
    <Page title="Your session">
      {error ? <ErrorMessage error={error} /> : null}
      {session.role === 'org:member' ? (
        <p>Your role, org:member, has no other view yet: the server lets a member call only what every key may call about itself.</p>
      ) : null}
      {data ? (
        <dl className="facts" data-testid="session">
          <dt>Organization</dt>
          <dd>
            <code>{data.organization_id}</code>
          </dd>
          <dt>Person (user id)</dt>
          <dd>
            <code>{data.user_id}</code>
          </dd>
          <dt>Signed in</dt>
          <dd>{current ? `${current.method === 'key' ? 'with a management key' : 'through the identity provider'}, ${when(current.created_at)}` : '—'}</dd>
          <dt>Role</dt>
          <dd>{current?.role ?? "the key's scopes"}</dd>
          <dt>Ends when idle after</dt>
          <dd>{when(current?.idle_expires_at ?? null)}</dd>
          <dt>Ends at the latest</dt>
          <dd>{when(current?.expires_at ?? null)}</dd>
        </dl>
      ) : (
        <p className="status">Loading…</p>
      )}
      <button type="button" onClick={() => void everywhere()} disabled={busy}>
        Sign out everywhere
      </button>
      {failed ? <ErrorMessage error={failed} /> : null}
    </Page>
  );
}
