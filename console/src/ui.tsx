import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { ApiError } from './api';

/** An error the user must notice: announced by screen readers (role=alert). */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className="error">
      {text}
    </p>
  );
}

/** Loads data when its dependencies change; `reload` fetches again after a change. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): { data?: T; error?: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const headingId = id ?? `h-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section aria-labelledby={headingId} className="panel">
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export const fmt = (n: number, digits = 3): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');
