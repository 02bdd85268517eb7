import { useState, type FormEvent } from 'react';
import { api, query } from '../api';
import { ErrorBox, fmt, LongText, Section } from '../ui';
import { MemoryBrowse } from './MemoryBrowse';
import { Trust, type Memory } from './MemoryRow';
import { ScoreBreakdown, type Contribution } from './ScoreBreakdown';

interface SearchResult extends Memory {
  score: number;
  explanation?: Contribution[];
}

/** Memory: search with each score broken into its signals; browse, filter, page, edit, delete, history. */
export function MemoryView({ agent }: { agent: string }) {
  return (
    <div className="stack">
      <SearchPanel agent={agent} />
      <MemoryBrowse agent={agent} />
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
    }
  };

  return (
    <Section title="Search">
      <search>
        <form onSubmit={search} className="row">
          <label htmlFor="search-q">Search {agent}'s memories</label>
          <input id="search-q" type="search" value={q} onChange={(e) => setQ(e.target.value)} required />
          <button type="submit">Search</button>
        </form>
      </search>
      <ErrorBox error={error} stale={results !== undefined} />
      {results && results.length === 0 && <p role="status">No memory matches.</p>}
      {results && results.length > 0 && (
        <ol className="results" aria-label="Search results">
          {results.map((r) => (
            <li key={r.id} className="result">
              <LongText text={r.content} />
              <p className="meta">
                score <strong>{fmt(r.score)}</strong> · {r.date} · {r.source}
                {r.tags.length > 0 && ` · ${r.tags.join(', ')}`}
              </p>
              <Trust memory={r} />
              {r.explanation && <ScoreBreakdown id={r.id} parts={r.explanation} score={r.score} />}
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
