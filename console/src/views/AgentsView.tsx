import { useState, type FormEvent } from 'react';
import { api, enc } from '../api';
import { ErrorBox, Json, Section, useLoad } from '../ui';

interface Agent {
  name: string;
  persona: string;
  policy: unknown;
  default?: boolean;
}
const FILES = [
  { kind: 'user', label: 'USER.md' },
  { kind: 'soul', label: 'SOUL.md' },
  { kind: 'memory', label: 'MEMORY.md' },
] as const;

/** Agents with persona and policy, and their versioned files with history and restore. */
export function AgentsView({ onAgentsChanged }: { onAgentsChanged: () => void }) {
  const list = useLoad(() => api<{ agents: Agent[] }>('GET', '/agents'), []);
  const [selected, setSelected] = useState('alfred');
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('POST', '/agents', { name });
      setSelected(name);
      setName('');
      list.reload();
      onAgentsChanged();
    } catch (err) {
      setError(err);
    }
  };
  const agent = list.data?.agents.find((a) => a.name === selected);
  return (
    <div className="columns">
      <Section title="Agents">
        <ErrorBox error={list.error} />
        <ul className="picklist" aria-label="Agents">
          {list.data?.agents.map((a) => (
            <li key={a.name}>
              <button type="button" aria-pressed={a.name === selected} onClick={() => setSelected(a.name)}>
                {a.name}
                {a.default && ' (default)'}
              </button>
            </li>
          ))}
        </ul>
        <form onSubmit={create} className="row">
          <label htmlFor="new-agent">New agent name</label>
          <input id="new-agent" value={name} onChange={(e) => setName(e.target.value)} required />
          <button type="submit">Create agent</button>
        </form>
        <ErrorBox error={error} />
      </Section>
      {agent && <AgentDetail key={agent.name} agent={agent} onSaved={list.reload} />}
    </div>
  );
}

function AgentDetail({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const [persona, setPersona] = useState(agent.persona);
  const [file, setFile] = useState<(typeof FILES)[number]['kind']>('user');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('PATCH', `/agents/${enc(agent.name)}`, { persona });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Section title={`Agent ${agent.name}`} id="h-agent-detail">
      <form onSubmit={save}>
        <label htmlFor="persona">Persona</label>
        <textarea id="persona" rows={3} value={persona} onChange={(e) => (setPersona(e.target.value), setSaved(false))} />
        <button type="submit">Save persona</button>
        {saved && <span role="status"> Saved.</span>}
      </form>
      <ErrorBox error={error} />
      <h3>Policy</h3>
      <Json value={agent.policy} label="Policy" />
      <div role="tablist" aria-label="Agent files" className="row">
        {FILES.map((f) => (
          <button key={f.kind} role="tab" type="button" aria-selected={file === f.kind} onClick={() => setFile(f.kind)}>
            {f.label}
          </button>
        ))}
      </div>
      <AgentFile key={file} agent={agent.name} file={file} />
    </Section>
  );
}

function AgentFile({ agent, file }: { agent: string; file: string }) {
  const current = useLoad(() => api<{ content: string; version: number; updated_at: string | null }>('GET', `/agents/${enc(agent)}/files/${file}`), [agent, file]);
  const history = useLoad(() => api<{ versions: { version: number; at: string; reason: string; size: number }[] }>('GET', `/agents/${enc(agent)}/files/${file}/history`), [agent, file]);
  const [error, setError] = useState<unknown>();
  const restore = async (version: number) => {
    setError(undefined);
    try {
      await api('POST', `/agents/${enc(agent)}/files/${file}/restore`, { version });
      current.reload();
      history.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div role="tabpanel">
      <ErrorBox error={current.error ?? history.error ?? error} />
      {current.data && (
        <>
          <p className="meta">
            version {current.data.version}
            {current.data.updated_at && `, updated ${current.data.updated_at}`}
          </p>
          <pre className="json" tabIndex={0} aria-label="File content">
            {current.data.content}
          </pre>
        </>
      )}
      <h3>Versions</h3>
      {history.data?.versions.length === 0 && <p>No earlier versions.</p>}
      <ol aria-label="Versions">
        {history.data?.versions.map((v) => (
          <li key={v.version}>
            v{v.version} at {v.at}: {v.reason} ({v.size} bytes){' '}
            <button type="button" onClick={() => restore(v.version)}>
              Restore v{v.version}
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}
