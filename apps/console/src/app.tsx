// The console's shell: which session this browser has, the header (organization, the views the
// session's role may use, sign-out), and the view for the URL. Every view renders text only: React
// escapes it, and nothing here sets HTML.
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import { AuditPage } from './audit-page.js';
import { BudgetsPage } from './budgets-page.js';
import { ByokPage } from './byok-page.js';
import { GuardrailsPage } from './guardrails-page.js';
import { KeysPage } from './keys-page.js';
import { MembersPage } from './members-page.js';
import { PresetsPage } from './presets-page.js';
import { navigate, useLinkClick, usePath } from './router.js';
import { describeError, resume, type ServerError, type Session } from './session.js';
import { SessionPage } from './session-page.js';
import { SettingsPage } from './settings-page.js';
import { SignInPage } from './sign-in-page.js';
import { ErrorMessage } from './ui.js';
import VIEWS from './views.json' with { type: 'json' };
import { WorkspacesPage } from './workspaces-page.js';

interface View {
  path: string;
  title: string;
  roles: string[];
}

/**
 * The views a session may use: an identity provider's org:member only those marked for members (the
 * server refuses a member the rest); an admin, or a key-made session, all of them (a scoped key's
 * session is refused, view by view, what its scopes lack).
 */
export function viewsFor(session: Session): View[] {
  const role = session.role === 'org:member' ? 'member' : 'admin';
  return VIEWS.filter((v) => v.roles.includes(role));
}

const home = (session: Session) => viewsFor(session)[0]?.path ?? '/session';

function viewOf(path: string, session: Session, signedOut: () => void): ReactNode {
  if (!viewsFor(session).some((v) => v.path === path)) return null;
  switch (path) {
    case '/keys':
      return <KeysPage session={session} />;
    case '/workspaces':
      return <WorkspacesPage session={session} />;
    case '/members':
      return <MembersPage session={session} />;
    case '/budgets':
      return <BudgetsPage session={session} />;
    case '/guardrails':
      return <GuardrailsPage session={session} />;
    case '/byok':
      return <ByokPage session={session} />;
    case '/presets':
      return <PresetsPage session={session} />;
    case '/audit':
      return <AuditPage session={session} />;
    case '/settings':
      return <SettingsPage session={session} />;
    case '/session':
      return <SessionPage session={session} onSignedOut={signedOut} />;
    default:
      return null;
  }
}

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

  // Signed out, every view is the sign-in; signed in, the sign-in and the root are the first view.
  useEffect(() => {
    if (state.kind === 'signed-out' && path !== '/sign-in') navigate('/sign-in', true);
    if (state.kind === 'signed-in' && (path === '/sign-in' || path === '/')) navigate(home(state.session), true);
  }, [state, path]);

  const signedIn = useCallback((session: Session) => {
    setState({ kind: 'signed-in', session });
    navigate(home(session), true);
  }, []);
  const signedOut = useCallback(() => setState({ kind: 'signed-out' }), []);

  if (state.kind === 'loading') return <p className="status">Loading…</p>;
  if (state.kind === 'failed') return <ErrorMessage error={state.error} />;
  if (state.kind === 'signed-out') return <SignInPage onSignedIn={signedIn} />;
  return (
    <>
      <Header session={state.session} onSignedOut={signedOut} />
      <main>{viewOf(path, state.session, signedOut) ?? <NotFound session={state.session} />}</main>
    </>
  );
}

function Header({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const [error, setError] = useState<ServerError | null>(null);
  const [busy, setBusy] = useState(false);
  const path = usePath();
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
        <ul>
          {viewsFor(session).map((view) => (
            <li key={view.path}>
              <NavLink view={view} current={path === view.path} />
            </li>
          ))}
        </ul>
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

function NavLink({ view, current }: { view: View; current: boolean }) {
  const click = useLinkClick(view.path);
  return (
    <a href={`/console${view.path}`} onClick={click} aria-current={current ? 'page' : undefined}>
      {view.title}
    </a>
  );
}

function NotFound({ session }: { session: Session }) {
  const first = viewsFor(session)[0] ?? { path: '/session', title: 'Your session', roles: [] };
  const click = useLinkClick(first.path);
  return (
    <section>
      <h1>Not found</h1>
      <p>
        This view does not exist, or your role may not use it.{' '}
        <a href={`/console${first.path}`} onClick={click}>
          Go to {first.title.toLowerCase()}
        </a>
        .
      </p>
    </section>
  );
}
