// The console's shell: which session this browser has, the header (organization, sign-out), and
// the view for the URL. Every view renders text only: React escapes it, and nothing here sets HTML.
import { useCallback, useEffect, useState } from 'react';
import { KeysPage } from './keys-page.js';
import { navigate, useLinkClick, usePath } from './router.js';
import { describeError, resume, type ServerError, type Session } from './session.js';
import { SignInPage } from './sign-in-page.js';
import { ErrorMessage } from './ui.js';

type State = { kind: 'loading' } | { kind: 'failed'; error: ServerError } | { kind: 'signed-out' } | { kind: 'signed-in'; session: Session };

export function App() {
  const path = usePath();
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    let live = true;
    resume().then(
      (session) => live && setState(session ? { kind: 'signed-in', session } : { kind: 'signed-out' }),
      (error: unknown) => live && setState({ kind: 'failed', error: describeError(error) }),
    );
    return () => {
      live = false;
    };
  }, []);

  // Signed out, every view is the sign-in; signed in, the sign-in and the root are the keys.
  useEffect(() => {
    if (state.kind === 'signed-out' && path !== '/sign-in') navigate('/sign-in', true);
    if (state.kind === 'signed-in' && (path === '/sign-in' || path === '/')) navigate('/keys', true);
  }, [state.kind, path]);

  const signedIn = useCallback((session: Session) => {
    setState({ kind: 'signed-in', session });
    navigate('/keys', true);
  }, []);
  const signedOut = useCallback(() => setState({ kind: 'signed-out' }), []);

  if (state.kind === 'loading') return <p className="status">Loading…</p>;
  if (state.kind === 'failed') return <ErrorMessage error={state.error} />;
  if (state.kind === 'signed-out') return <SignInPage onSignedIn={signedIn} />;
  return (
    <>
      <Header session={state.session} onSignedOut={signedOut} />
      <main>{path === '/keys' ? <KeysPage session={state.session} /> : <NotFound />}</main>
    </>
  );
}

function Header({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const [error, setError] = useState<ServerError | null>(null);
  const [busy, setBusy] = useState(false);
  const keysClick = useLinkClick('/keys');
  const signOut = async () => {
    setBusy(true);
    try {
      await session.client.sessions.signOut.mutate();
      onSignedOut();
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <header className="top">
      <span className="brand">Switchyard</span>
      <nav aria-label="Views">
        <a href="/console/keys" onClick={keysClick} aria-current={usePath() === '/keys' ? 'page' : undefined}>
          Keys
        </a>
      </nav>
      <span className="org" data-testid="organization">
        Organization <code>{session.organizationId}</code>
      </span>
      <button type="button" onClick={signOut} disabled={busy}>
        Sign out
      </button>
      {error ? <ErrorMessage error={error} /> : null}
    </header>
  );
}

function NotFound() {
  const click = useLinkClick('/keys');
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This view does not exist.{' '}
        <a href="/console/keys" onClick={click}>
          Go to the keys
        </a>
        .
      </p>
    </section>
  );
}
