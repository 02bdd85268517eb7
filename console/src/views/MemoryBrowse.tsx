import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, query } from '../api';
import { ErrorBox, Section, useDebounced, useLoad } from '../ui';
import { MemoryRow, type Memory } from './MemoryRow';

const PAGE = 20;
/** Filters typed as text: each is asked for once typing pauses, not per keystroke. */
const TYPED = ['tag_prefix', 'written_via', 'written_session', 'written_key', 'written_source'] as const;
const INITIAL = {
  tag_prefix: '',
  source: '',
  date: '',
  flagged: '',
  written_via: '',
  written_session: '',
  written_key: '',
  written_source: '',
  sort_by: 'date',
  sort_order: 'desc',
};
type Filters = typeof INITIAL;

/** Browse: filters, the total, page by page or straight to any page; focus stays in the list after a delete. */
export function MemoryBrowse({ agent }: { agent: string }) {
  const [typed, setTyped] = useState(INITIAL);
  const settled = useDebounced(typed, 350);
  // Picks (selects, dates) apply at once; typed text once it settles.
  const filters: Filters = { ...typed, ...Object.fromEntries(TYPED.map((k) => [k, settled[k]])) };
  const key = JSON.stringify(filters);
  const [offset, setOffset] = useState(0);
  // New filters start again at the first page.
  // biome-ignore lint/correctness/useExhaustiveDependencies: key (the filters) is the trigger
  useEffect(() => setOffset(0), [key]);
  const list = useLoad(
    () =>
      api<{ memories: Memory[]; pagination: { total: number; has_more: boolean } }>(
        'GET',
        `/memories${query({ ...filters, limit: PAGE, offset })}`,
      ),
    [agent, key, offset],
  );
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setTyped({ ...typed, [k]: e.target.value });
  const total = list.data?.pagination.total ?? 0;
  const shown = list.data?.memories ?? [];
  const focusAfterDelete = useRef<number | undefined>(undefined);
  const listRef = useRef<HTMLUListElement>(null);
  const status = useRef<HTMLParagraphElement>(null);

  // After a delete the list reloads: focus goes to the memory now in that place (or the one before, or the count).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the reloaded list.data is the trigger
  useEffect(() => {
    const at = focusAfterDelete.current;
    if (at === undefined || list.loading) return;
    focusAfterDelete.current = undefined;
    const rows = listRef.current?.querySelectorAll<HTMLElement>(':scope > li');
    const row = rows?.[Math.min(at, rows.length - 1)];
    (row ?? status.current)?.focus();
  }, [list.loading, list.data]);

  return (
    <Section title="Browse">
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>
          Tag starts with <input value={typed.tag_prefix} onChange={set('tag_prefix')} placeholder="proj" />
        </label>
        <label>
          Source{' '}
          <select value={typed.source} onChange={set('source')}>
            <option value="">any</option>
            <option value="daily">daily (API)</option>
            <option value="memory">memory (distilled)</option>
          </select>
        </label>
        <label>
          Date <input type="date" value={typed.date} onChange={set('date')} />
        </label>
        <label>
          Trust{' '}
          <select value={typed.flagged} onChange={set('flagged')}>
            <option value="">any</option>
            <option value="true">flagged only</option>
            <option value="false">unflagged only</option>
          </select>
        </label>
        <label>
          Written via{' '}
          <input
            value={typed.written_via}
            onChange={set('written_via')}
            placeholder="rest, mcp:memory_record, distill…"
          />
        </label>
        <label>
          Written in session <input value={typed.written_session} onChange={set('written_session')} />
        </label>
        <label>
          Written with key <input value={typed.written_key} onChange={set('written_key')} placeholder="key-…" />
        </label>
        <label>
          Written from source <input value={typed.written_source} onChange={set('written_source')} />
        </label>
        <label>
          Sort{' '}
          <select value={typed.sort_by} onChange={set('sort_by')}>
            <option value="date">date</option>
            <option value="importance">importance</option>
          </select>
        </label>
        <label>
          Order{' '}
          <select value={typed.sort_order} onChange={set('sort_order')}>
            <option value="desc">newest / highest first</option>
            <option value="asc">oldest / lowest first</option>
          </select>
        </label>
      </form>
      <ErrorBox error={list.error} stale={list.data !== undefined} />
      <p role="status" aria-live="polite" ref={status} tabIndex={-1}>
        {!list.data
          ? list.loading
            ? 'Loading…'
            : ''
          : total === 0
            ? key === JSON.stringify(INITIAL)
              ? 'No memories yet.'
              : 'No memories match.'
            : `${offset + 1}–${offset + shown.length} of ${total}`}
        {list.data && list.loading && ' (updating…)'}
      </p>
      <ul className="memories" aria-label="Memories" ref={listRef}>
        {shown.map((m, i) => (
          <MemoryRow
            key={m.id}
            memory={m}
            onChanged={list.reload}
            onDeleted={() => {
              focusAfterDelete.current = i;
              list.reload();
            }}
          />
        ))}
      </ul>
      <Pager offset={offset} total={total} onOffset={setOffset} onRefresh={list.reload} />
    </Section>
  );
}

/** First / previous / next / last, and a page number to go to: the end of 10,000 memories is one step away. */
function Pager({
  offset,
  total,
  onOffset,
  onRefresh,
}: {
  offset: number;
  total: number;
  onOffset: (o: number) => void;
  onRefresh: () => void;
}) {
  const pages = Math.max(1, Math.ceil(total / PAGE));
  const page = Math.floor(offset / PAGE) + 1;
  const [wanted, setWanted] = useState(String(page));
  useEffect(() => setWanted(String(page)), [page]);
  const go = (p: number) => onOffset((Math.min(Math.max(1, p), pages) - 1) * PAGE);
  const jump = (e: FormEvent) => {
    e.preventDefault();
    const n = Number(wanted);
    if (Number.isInteger(n)) go(n);
  };
  return (
    <nav aria-label="Memory pages" className="pager">
      <button type="button" onClick={onRefresh}>
        Refresh
      </button>
      <button type="button" disabled={page <= 1} onClick={() => go(1)}>
        First page
      </button>
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>
        Previous page
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => go(page + 1)}>
        Next page
      </button>
      <button type="button" disabled={page >= pages} onClick={() => go(pages)}>
        Last page
      </button>
      <form onSubmit={jump} className="row">
        <label htmlFor="page-number">Go to page</label>
        <input
          id="page-number"
          type="number"
          min={1}
          max={pages}
          value={wanted}
          onChange={(e) => setWanted(e.target.value)}
          size={5}
        />
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}
