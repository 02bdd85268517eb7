import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError, UnreachableError } from './api';
import { connection, useConnection, useOnReconnect } from './connection';

/** An error the user must notice: announced by screen readers (role=alert). */
export function ErrorBox({ error, stale }: { error: unknown; stale?: boolean }) {
  if (!error) return null;
  let text: string;
  if (error instanceof UnreachableError)
    text = stale
      ? 'Not up to date: the server cannot be reached. Showing what was loaded before.'
      : 'Could not load: the server cannot be reached.';
  else if (error instanceof ApiError) text = `${error.code}: ${error.message}`;
  else text = error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className={error instanceof UnreachableError ? 'error offline' : 'error'}>
      {text}
    </p>
  );
}

export interface Loaded<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Loads data when its dependencies change; `reload` fetches again after a change. A failed load keeps the data
 * shown before (with the error beside it), and a load that failed because the server was away is repeated as soon
 * as it answers again.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  // `load` is a new closure on every render: the caller's deps say when it means something new, and tick is reload.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps and tick are the triggers
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const failedOffline = state.error instanceof UnreachableError;
  useOnReconnect(useCallback(() => failedOffline && reload(), [failedOffline, reload]));
  return { ...state, reload };
}

/** Repeats `fn` every `ms` while the component is shown and the tab is visible. */
export function useInterval(fn: () => void, ms: number): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    const id = setInterval(() => document.visibilityState === 'visible' && saved.current(), ms);
    return () => clearInterval(id);
  }, [ms]);
}

/** The value once it stopped changing for `ms` (a filter typed letter by letter asks once). */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const id = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(id);
  }, [value, ms]);
  return settled;
}

/** Says, once for the whole page, that the server cannot be reached and when the next try is; offers to try now. */
export function ConnectionBanner() {
  const state = useConnection();
  const [now, setNow] = useState(Date.now());
  const [back, setBack] = useState(false);
  const wasDown = useRef(false);
  useEffect(() => {
    if (!state.reachable) {
      wasDown.current = true;
      const id = setInterval(() => setNow(Date.now()), 500);
      return () => clearInterval(id);
    }
    if (!wasDown.current) return;
    wasDown.current = false;
    setBack(true);
    const id = setTimeout(() => setBack(false), 4000);
    return () => clearTimeout(id);
  }, [state]);
  if (state.reachable) {
    return back ? (
      <p role="status" className="banner ok-banner">
        Connected to the server again; the screens were brought up to date.
      </p>
    ) : null;
  }
  const inS = Math.max(0, Math.ceil(((state.retryAt ?? now) - now) / 1000));
  return (
    <div role="alert" className="banner offline-banner">
      <p>
        <strong>The Alfred server at {location.host} cannot be reached.</strong> What you see was loaded before; nothing
        you change can be saved until it is back. {inS > 0 ? `Trying again in ${inS} s.` : 'Trying again…'}
      </p>
      <button type="button" onClick={() => connection.retryNow()}>
        Try again now
      </button>
    </div>
  );
}

/** Text that may be very long: it wraps anywhere, and past `limit` characters it is shown shortened until asked. */
export function LongText({
  text,
  limit = 600,
  className = 'content',
}: {
  text: string;
  limit?: number;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  if (text.length <= limit) return <p className={className}>{text}</p>;
  return (
    <div className={`${className} long`}>
      <p className="long-text">{open ? text : `${text.slice(0, limit).trimEnd()}…`}</p>
      <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Show less' : `Show more (${text.length.toLocaleString('en-US')} characters)`}
      </button>
    </div>
  );
}

export function Section({
  title,
  children,
  id,
  headingRef,
}: {
  title: string;
  children: ReactNode;
  id?: string;
  headingRef?: React.Ref<HTMLHeadingElement>;
}) {
  const headingId = id ?? `h-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={headingId} className="panel">
      <h2 id={headingId} ref={headingRef} tabIndex={headingRef ? -1 : undefined}>
        {title}
      </h2>
      {children}
    </section>
  );
}

/**
 * Text in a box that scrolls. It takes keyboard focus, so that it can be scrolled without a mouse (axe's
 * scrollable-region-focusable), and its label says what has focus. The one place the console does this.
 */
export function ScrollText({
  label,
  className = 'json',
  children,
}: {
  label: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex lint/a11y/useAriaPropsSupportedByRole: a labelled scroll box
    <pre className={className} aria-label={label} tabIndex={0}>
      {children}
    </pre>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return <ScrollText label={label}>{JSON.stringify(value, null, 2)}</ScrollText>;
}

export const fmt = (n: number, digits = 3): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** A signed number that never reads "-0.0000": values that round to zero are plain 0. */
export function fmtSigned(n: number, digits = 4): string {
  if (!Number.isFinite(n)) return '–';
  const rounded = Number(n.toFixed(digits));
  if (rounded === 0) return (0).toFixed(digits);
  return `${rounded > 0 ? '+' : '−'}${Math.abs(rounded).toFixed(digits)}`;
}

/** A moment as the user's locale shows it, with the exact time for machines and hover. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return null;
  const d = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}
