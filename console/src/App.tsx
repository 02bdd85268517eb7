import { useEffect, useRef, useState } from 'react';
import { api, session } from './api';
import { ConnectionBanner } from './ui';
import { LoginView } from './views/LoginView';
import { MemoryView } from './views/MemoryView';
import { SkillsView } from './views/SkillsView';
import { ChatView } from './views/ChatView';
import { AgentsView } from './views/AgentsView';
import { OperationsView } from './views/OperationsView';

const SCREENS = [
  { id: 'memory', label: 'Memory' },
  { id: 'skills', label: 'Skills' },
  { id: 'chat', label: 'Chat' },
  { id: 'agents', label: 'Agents' },
  { id: 'operations', label: 'Operations' },
] as const;
type Screen = (typeof SCREENS)[number]['id'];

function currentScreen(): Screen {
  const id = location.hash.replace(/^#\/?/, '');
  return (SCREENS.find((s) => s.id === id)?.id ?? 'memory') as Screen;
}

/** Screens by URL hash (no server-side routes): the gateway serves one page. */
export function App() {
  const [signedIn, setSignedIn] = useState(session.signedIn());
  const [screen, setScreen] = useState<Screen>(currentScreen());
  const [agent, setAgent] = useState(session.agent());
  const [agents, setAgents] = useState<string[]>([]);
  const heading = useRef<HTMLHeadingElement>(null);
  const arrived = useRef(false);

  useEffect(() => {
    const onHash = () => setScreen(currentScreen());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  // The list of agents is fetched again on every change of screen (one may have been added on the agents screen).
  // biome-ignore lint/correctness/useExhaustiveDependencies: screen is the trigger
  useEffect(() => {
    if (!signedIn) return;
    api<{ agents: { name: string }[] }>('GET', '/agents').then(
      (r) => setAgents(r.agents.map((a) => a.name)),
      () => setAgents([]),
    );
  }, [signedIn, screen]);
  // After sign-in and on every change of screen, focus goes to the screen's heading (keyboard and screen reader users
  // start there).
  // biome-ignore lint/correctness/useExhaustiveDependencies: screen is the trigger
  useEffect(() => {
    if (!signedIn) {
      arrived.current = false;
      return;
    }
    if (arrived.current || session.justSignedIn) heading.current?.focus();
    arrived.current = true;
    session.justSignedIn = false;
  }, [screen, signedIn]);
  useEffect(() => {
    document.title = signedIn
      ? `${SCREENS.find((s) => s.id === screen)!.label} · Alfred console`
      : 'Sign in · Alfred console';
  }, [screen, signedIn]);

  if (!signedIn) {
    return (
      <LoginView
        onSignedIn={() => {
          session.justSignedIn = true;
          setAgent(session.agent());
          setSignedIn(true);
        }}
      />
    );
  }
  const chooseAgent = (name: string) => {
    session.setAgent(name);
    setAgent(name);
  };
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Alfred console</span>
        <nav aria-label="Screens">
          <ul>
            {SCREENS.map((s) => (
              <li key={s.id}>
                <a href={`#/${s.id}`} aria-current={s.id === screen ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <label className="agent-pick">
          Agent{' '}
          <select value={agent} onChange={(e) => chooseAgent(e.target.value)}>
            {[...new Set([agent, ...agents])].map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <button
          type="button"
          onClick={() => {
            session.signOut();
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <ConnectionBanner />
      <main id="main" tabIndex={-1}>
        <h1 className="screen-title" tabIndex={-1} ref={heading}>
          {SCREENS.find((s) => s.id === screen)!.label}
        </h1>
        {screen === 'memory' && <MemoryView key={agent} agent={agent} />}
        {screen === 'skills' && <SkillsView key={agent} />}
        {screen === 'chat' && <ChatView key={agent} agent={agent} />}
        {screen === 'agents' && <AgentsView onAgentsChanged={() => setScreen(currentScreen())} />}
        {screen === 'operations' && <OperationsView />}
      </main>
    </>
  );
}
