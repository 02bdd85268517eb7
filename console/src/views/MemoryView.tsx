import { useState, type FormEvent } from 'react';
import { api, enc, query } from '../api';
import { ErrorBox, fmt, Section, useLoad } from '../ui';

export interface Memory {
  id: string;
  content: string;
  date: string;
  timestamp: string;
  importance: number;
  tags: string[];
  source: string;
  /** Provenance and trust flags, when the memory service records them. */
  provenance?: unknown;
  trust?: unknown;
  flags?: unknown;
}
interface Contribution {
  signal: string;
  value: number;
  contribution: number;
}
interface SearchResult extends Memory {
  score: number;
  explanation?: Contribution[];
}

const PAGE = 20;

/** Memory: search with each score broken into its signals; browse, filter, page, edit, delete, history. */
export function MemoryView({ agent }: { agent: string }) {
  return (
    <div className="stack">
      <SearchPanel agent={agent} />
      <BrowsePanel agent={agent} />
    </div>
  );
}

function SearchPanel({ agent }: { agent: string }) {
  const [q, setQ] = useState('');
  const [results, setResults] = useState<SearchResult[]>();
  const [error, setError] = useState<unknown>();

  const search = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await api<{ results: SearchResult[] }>('GET', `/search${query({ q, limit: 10, explain: true })}`);
      setResults(r.results);
    } catch (err) {
      setError(err);
      setResults(undefined);
    }
  };

  return (
    <Section title="Search">
      <form role="search" onSubmit={search} className="row">
        <label htmlFor="search-q">Search {agent}'s memories</label>
        <input id="search-q" type="search" value={q} onChange={(e) => setQ(e.target.value)} required />
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={error} />
      {results && results.length === 0 && <p role="status">No memory matches.</p>}
      {results && results.length > 0 && (
        <ol className="results" aria-label="Search results">
          {results.map((r) => (
            <li key={r.id} className="result">
              <p className="content">{r.content}</p>
              <p className="meta">
                score <strong>{fmt(r.score)}</strong> · {r.date} · {r.source}
                {r.tags.length > 0 && ` · ${r.tags.join(', ')}`}
              </p>
              {r.explanation && <Breakdown id={r.id} parts={r.explanation} score={r.score} />}
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}

/** The ranking module's per-signal contributions: they sum to the score. */
function Breakdown({ id, parts, score }: { id: string; parts: Contribution[]; score: number }) {
  return (
    <table className="breakdown" aria-label={`Score breakdown of ${id}`}>
      <caption>Score breakdown (contributions sum to {fmt(score)})</caption>
      <thead>
        <tr>
          <th scope="col">Signal</th>
          <th scope="col">Value</th>
          <th scope="col">Contribution</th>
          <th scope="col">
            <span className="visually-hidden">Share</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {parts.map((p) => (
          <tr key={p.signal}>
            <th scope="row">{p.signal}</th>
            <td>{fmt(p.value)}</td>
            <td>{(p.contribution >= 0 ? '+' : '') + fmt(p.contribution, 4)}</td>
            <td>
              <meter min={0} max={1} value={Math.min(1, Math.abs(p.contribution))} aria-label={`${p.signal} contribution`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BrowsePanel({ agent }: { agent: string }) {
  const [filters, setFilters] = useState({ tag: '', source: '', date: '', sort_by: 'date', sort_order: 'desc' });
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api<{ memories: Memory[]; pagination: { total: number; has_more: boolean } }>('GET', `/memories${query({ ...filters, limit: PAGE, offset })}`),
    [agent, filters, offset],
  );
  const set = (k: keyof typeof filters) => (e: { target: { value: string } }) => {
    setOffset(0);
    setFilters({ ...filters, [k]: e.target.value });
  };
  const total = list.data?.pagination.total ?? 0;

  return (
    <Section title="Browse">
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>
          Tag <input value={filters.tag} onChange={set('tag')} />
        </label>
        <label>
          Source{' '}
          <select value={filters.source} onChange={set('source')}>
            <option value="">any</option>
            <option value="daily">daily (API)</option>
            <option value="memory">memory (distilled)</option>
          </select>
        </label>
        <label>
          Date <input type="date" value={filters.date} onChange={set('date')} />
        </label>
        <label>
          Sort{' '}
          <select value={filters.sort_by} onChange={set('sort_by')}>
            <option value="date">date</option>
            <option value="importance">importance</option>
          </select>
        </label>
        <label>
          Order{' '}
          <select value={filters.sort_order} onChange={set('sort_order')}>
            <option value="desc">newest / highest first</option>
            <option value="asc">oldest / lowest first</option>
          </select>
        </label>
      </form>
      <ErrorBox error={list.error} />
      <p role="status" aria-live="polite">
        {list.loading ? 'Loading…' : total === 0 ? 'No memories.' : `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}`}
      </p>
      <ul className="memories" aria-label="Memories">
        {list.data?.memories.map((m) => <MemoryRow key={m.id} memory={m} onChanged={list.reload} />)}
      </ul>
      <div className="row">
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous page
        </button>
        <button type="button" disabled={!list.data?.pagination.has_more} onClick={() => setOffset(offset + PAGE)}>
          Next page
        </button>
      </div>
    </Section>
  );
}

function MemoryRow({ memory: m, onChanged }: { memory: Memory; onChanged: () => void }) {
  const [mode, setMode] = useState<'view' | 'edit' | 'confirm-delete' | 'history'>('view');
  const [error, setError] = useState<unknown>();
  const act = (fn: () => Promise<unknown>) => async () => {
    setError(undefined);
    try {
      await fn();
      setMode('view');
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  const trust = [m.provenance, m.trust, m.flags].filter((x) => x !== undefined);

  return (
    <li className="memory" data-id={m.id}>
      <p className="content">{m.content}</p>
      <p className="meta">
        {m.date} · {m.source} · importance {fmt(m.importance, 2)}
        {m.tags.length > 0 && ` · tags: ${m.tags.join(', ')}`}
      </p>
      {trust.length > 0 && <p className="meta">trust: {trust.map((t) => (typeof t === 'string' ? t : JSON.stringify(t))).join(' · ')}</p>}
      <div className="row">
        <button type="button" onClick={() => setMode(mode === 'edit' ? 'view' : 'edit')} aria-expanded={mode === 'edit'}>
          Edit
        </button>
        <button type="button" onClick={() => setMode(mode === 'history' ? 'view' : 'history')} aria-expanded={mode === 'history'}>
          History
        </button>
        <button type="button" className="danger" onClick={() => setMode('confirm-delete')}>
          Delete
        </button>
      </div>
      {mode === 'confirm-delete' && (
        <div role="alertdialog" aria-label="Confirm delete" className="confirm">
          <p>Delete this memory? This cannot be undone.</p>
          <button type="button" className="danger" onClick={act(() => api('DELETE', `/memories/${enc(m.id)}`))} autoFocus>
            Yes, delete
          </button>
          <button type="button" onClick={() => setMode('view')}>
            Keep it
          </button>
        </div>
      )}
      {mode === 'edit' && <EditForm memory={m} onSave={(patch) => act(() => api('PUT', `/memories/${enc(m.id)}`, patch))()} onCancel={() => setMode('view')} />}
      {mode === 'history' && <History id={m.id} />}
      <ErrorBox error={error} />
    </li>
  );
}

function EditForm({ memory, onSave, onCancel }: { memory: Memory; onSave: (patch: object) => void; onCancel: () => void }) {
  const [content, setContent] = useState(memory.content);
  const [importance, setImportance] = useState(String(memory.importance));
  const [tags, setTags] = useState(memory.tags.join(', '));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
    onSave({ content, importance: Number(importance), tags: tagList });
  };
  return (
    <form className="edit" onSubmit={submit} aria-label="Edit memory">
      <label>
        Content <textarea value={content} onChange={(e) => setContent(e.target.value)} rows={3} required />
      </label>
      <label>
        Importance <input type="number" min={0} max={1} step={0.05} value={importance} onChange={(e) => setImportance(e.target.value)} />
      </label>
      <label>
        Tags (comma-separated) <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      <div className="row">
        <button type="submit">Save</button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function History({ id }: { id: string }) {
  const h = useLoad(() => api<{ events: { kind: string; version: number; at: string; memory?: Memory }[] }>('GET', `/memories/${enc(id)}/history`), [id]);
  return (
    <div className="history">
      <ErrorBox error={h.error} />
      <ol aria-label="Memory history">
        {h.data?.events.map((e) => (
          <li key={`${e.version}-${e.kind}`}>
            v{e.version} {e.kind} at {e.at}
            {e.memory && `: “${e.memory.content}” (importance ${fmt(e.memory.importance, 2)}, tags ${e.memory.tags.join(', ') || 'none'})`}
          </li>
        ))}
      </ol>
    </div>
  );
}
