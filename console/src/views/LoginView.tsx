import { useState, type FormEvent } from 'react';
import { api, session } from '../api';
import { ErrorBox } from '../ui';

/** The user types the key; it is checked against the API and then kept in this tab's sessionStorage only. */
export function LoginView({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [agent, setAgent] = useState('alfred');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('GET', '/agents', undefined, { key: key.trim(), agent: agent.trim() || 'alfred' });
      session.signIn(key.trim(), agent.trim() || 'alfred');
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="login">
      <h1>Alfred console</h1>
      <p>
        See and steer what your agents know, can do and are doing. The console calls the same API as curl, with your
        key.
      </p>
      <form onSubmit={submit} aria-describedby="key-note">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          // biome-ignore lint/a11y/noAutofocus: the sign-in page has one task, and the key is its first field
          autoFocus
        />
        <p id="key-note" className="note">
          Kept in this browser tab's session only (sessionStorage); closing the tab forgets it. Leave empty when the API
          runs on loopback without keys.
        </p>
        <label htmlFor="agent">Agent</label>
        <input id="agent" name="agent" value={agent} onChange={(e) => setAgent(e.target.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
