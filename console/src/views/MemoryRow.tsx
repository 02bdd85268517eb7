import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, enc } from '../api';
import { ErrorBox, fmt, LongText, useLoad } from '../ui';

export interface Memory {
  id: string;
  content: string;
  date: string;
  timestamp: string;
  importance: number;
  tags: string[];
  source: string;
  /** Who wrote it (absent on memories written before provenance was recorded). */
  provenance?: Provenance;
  /** The injection check's mark: flagged content is stored but kept out of automatic prompt recall. */
  trust?: { flagged: boolean; reasons: string[] };
}
interface Provenance {
  tenant: string;
  agent: string;
  written_at: string;
  session?: string;
  turn?: string;
  key?: string;
  via?: string;
  source?: string;
}

/** One memory with its actions; a delete asks first (Escape keeps it) and tells the list, which moves focus on. */
export function MemoryRow({
  memory: m,
  onChanged,
  onDeleted,
}: {
  memory: Memory;
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const [mode, setMode] = useState<'view' | 'edit' | 'confirm-delete' | 'history'>('view');
  const [error, setError] = useState<unknown>();
  const deleteButton = useRef<HTMLButtonElement>(null);
  const act = (fn: () => Promise<unknown>, after: () => void) => async () => {
    setError(undefined);
    try {
      await fn();
      setMode('view');
      after();
    } catch (err) {
      setError(err);
    }
  };
  const keep = () => {
    setMode('view');
    deleteButton.current?.focus();
  };
  return (
    <li className={m.trust?.flagged ? 'memory flagged' : 'memory'} data-id={m.id} tabIndex={-1}>
      <LongText text={m.content} />
      <p className="meta">
        {m.date} · {m.source} · importance {fmt(m.importance, 2)}
        {m.tags.length > 0 && ` · tags: ${m.tags.join(', ')}`}
      </p>
      <Trust memory={m} />
      <div className="row">
        <button
          type="button"
          onClick={() => setMode(mode === 'edit' ? 'view' : 'edit')}
          aria-expanded={mode === 'edit'}
        >
          Edit
        </button>
        <button
          type="button"
          onClick={() => setMode(mode === 'history' ? 'view' : 'history')}
          aria-expanded={mode === 'history'}
        >
          History
        </button>
        <button type="button" className="danger" ref={deleteButton} onClick={() => setMode('confirm-delete')}>
          Delete
        </button>
      </div>
      {mode === 'confirm-delete' && (
        <ConfirmDelete onDelete={act(() => api('DELETE', `/memories/${enc(m.id)}`), onDeleted)} onKeep={keep} />
      )}
      {mode === 'edit' && (
        <EditForm
          memory={m}
          onSave={(patch) => act(() => api('PUT', `/memories/${enc(m.id)}`, patch), onChanged)()}
          onCancel={() => setMode('view')}
        />
      )}
      {mode === 'history' && <History id={m.id} />}
      <ErrorBox error={error} />
    </li>
  );
}

/** The delete prompt: focus starts on the safe choice's neighbour (delete), Escape keeps the memory. */
function ConfirmDelete({ onDelete, onKeep }: { onDelete: () => void; onKeep: () => void }) {
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => yes.current?.focus(), []);
  return (
    <div
      role="alertdialog"
      aria-label="Confirm delete"
      aria-describedby="confirm-delete-text"
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onKeep();
        }
      }}
    >
      <p id="confirm-delete-text">Delete this memory? This cannot be undone. (Escape keeps it.)</p>
      <button type="button" className="danger" onClick={onDelete} ref={yes}>
        Yes, delete
      </button>
      <button type="button" onClick={onKeep}>
        Keep it
      </button>
    </div>
  );
}

/** Who wrote a memory, and the injection check's mark with its reasons when it flagged the content. */
export function Trust({ memory: m }: { memory: Memory }) {
  const p = m.provenance;
  const parts = p
    ? [
        p.via && `via ${p.via}`,
        p.key && `key ${p.key}`,
        p.session && `session ${p.session}${p.turn ? ` (turn ${p.turn})` : ''}`,
        p.source && `source ${p.source}`,
        `at ${p.written_at}`,
      ].filter(Boolean)
    : [];
  return (
    <>
      {parts.length > 0 && (
        <p className="meta" role="note" aria-label={`Provenance of ${m.id}`}>
          written {parts.join(' · ')}
        </p>
      )}
      {m.trust?.flagged && (
        <div className="trust-flag" role="note" aria-label={`Trust of ${m.id}`}>
          <strong>⚠ Flagged: possible prompt injection</strong> (kept out of automatic recall)
          <ul aria-label={`Flag reasons of ${m.id}`}>
            {m.trust.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        </div>
      )}
    </>
  );
}

function EditForm({
  memory,
  onSave,
  onCancel,
}: {
  memory: Memory;
  onSave: (patch: object) => void;
  onCancel: () => void;
}) {
  const [content, setContent] = useState(memory.content);
  const [importance, setImportance] = useState(String(memory.importance));
  const [tags, setTags] = useState(memory.tags.join(', '));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const tagList = tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    onSave({ content, importance: Number(importance), tags: tagList });
  };
  return (
    <form className="edit" onSubmit={submit} aria-label="Edit memory">
      <label>
        Content{' '}
        <textarea
          value={content}
          onChange={(e) => setContent(e.target.value)}
          rows={Math.min(12, 3 + Math.floor(content.length / 200))}
          required
        />
      </label>
      <label>
        Importance{' '}
        <input
          type="number"
          min={0}
          max={1}
          step={0.05}
          value={importance}
          onChange={(e) => setImportance(e.target.value)}
        />
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
  const h = useLoad(
    () =>
      api<{ events: { kind: string; version: number; at: string; memory?: Memory }[] }>(
        'GET',
        `/memories/${enc(id)}/history`,
      ),
    [id],
  );
  return (
    <div className="history">
      <ErrorBox error={h.error} stale={h.data !== undefined} />
      <ol aria-label="Memory history">
        {h.data?.events.map((e) => (
          <li key={`${e.version}-${e.kind}`}>
            v{e.version} {e.kind} at {e.at}
            {e.memory && (
              <>
                {' '}
                (importance {fmt(e.memory.importance, 2)}, tags {e.memory.tags.join(', ') || 'none'}):
                <LongText text={`“${e.memory.content}”`} limit={300} className="history-text" />
              </>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
