import { useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { api, enc } from '../api';
import { ErrorBox, Json, Section, useLoad } from '../ui';
import { AgentFile } from './AgentFile';

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
type FileKind = (typeof FILES)[number]['kind'];

/** Agents with persona and policy, and their versioned files with an editor, history, diffs and restore. */
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
        <ErrorBox error={list.error} stale={list.data !== undefined} />
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
  const [file, setFile] = useState<FileKind>('user');
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
        <textarea
          id="persona"
          rows={3}
          value={persona}
          onChange={(e) => {
            setPersona(e.target.value);
            setSaved(false);
          }}
        />
        <button type="submit">Save persona</button>
        {saved && <span role="status"> Saved.</span>}
      </form>
      <ErrorBox error={error} />
      <h3>Policy</h3>
      <Json value={agent.policy} label="Policy" />
      <FileTabs file={file} onFile={setFile} />
      <div role="tabpanel" id={`panel-${file}`} aria-labelledby={`tab-${file}`}>
        <AgentFile
          key={file}
          agent={agent.name}
          file={file}
          label={FILES.find((f) => f.kind === file)!.label}
          editable={file !== 'memory'}
        />
      </div>
    </Section>
  );
}

/** The file tabs as a WAI-ARIA tab list: one tab stop, arrow keys (and Home/End) move between tabs and open them. */
function FileTabs({ file, onFile }: { file: FileKind; onFile: (f: FileKind) => void }) {
  const refs = useRef<Array<HTMLButtonElement | null>>([]);
  const onKey = (e: KeyboardEvent) => {
    const at = FILES.findIndex((f) => f.kind === file);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: FILES.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = (to + FILES.length) % FILES.length;
    onFile(FILES[next]!.kind);
    refs.current[next]?.focus();
  };
  return (
    <div role="tablist" aria-label="Agent files" className="row" onKeyDown={onKey}>
      {FILES.map((f, i) => (
        <button
          key={f.kind}
          ref={(el) => void (refs.current[i] = el)}
          id={`tab-${f.kind}`}
          role="tab"
          type="button"
          aria-selected={file === f.kind}
          aria-controls={file === f.kind ? `panel-${f.kind}` : undefined}
          tabIndex={file === f.kind ? 0 : -1}
          onClick={() => onFile(f.kind)}
        >
          {f.label}
        </button>
      ))}
    </div>
  );
}
