// Sign-in with a management key. The key lives in this form's state until it is sent, and is
// cleared as soon as it is: the session cookie stands for it from then on.
import { type FormEvent, useId, useState } from 'react';
import { type ServerError, type Session, signIn } from './session.js';
import { ErrorMessage } from './ui.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ServerError | null>(null);
  const id = useId();

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const sent = key.trim();
    setKey('');
    setBusy(true);
    setError(null);
    const answer = await signIn(sent);
    if ('client' in answer) {
      onSignedIn(answer);
      return;
    }
    setError(answer);
    setBusy(false);
  };

  return (
    <main className="sign-in">
      <h1>Sign in to Switchyard</h1>
      <form onSubmit={submit}>
        <label htmlFor={id}>Management key</label>
        <input
          id={id}
          name="management-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
          disabled={busy}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error ? <ErrorMessage error={error} /> : null}
      </form>
      <p className="hint">The key is exchanged once for a session; the browser does not keep it.</p>
    </main>
  );
}
