import { useState, type FormEvent } from 'react';
import { api, enc } from '../api';
import { ErrorBox, Section } from '../ui';

interface Problem {
  severity: string;
  field: string;
  message: string;
  line?: number;
  file: string;
}
interface InstallResult {
  source: string;
  ref: string;
  commit: string;
  dry_run: boolean;
  installed: { name: string; kinds: string[]; replaced: boolean; awaiting_consent: boolean }[];
  refused: { name: string | null; path: string; reason: string; problems: Problem[] }[];
}

/** Where an installed skill came from, as the skills table shows it. */
export interface InstalledFrom {
  source: string;
  ref: string;
  commit: string;
  path: string;
}

export function InstalledFromText({ from }: { from?: InstalledFrom }) {
  if (!from) return <>—</>;
  return (
    <code title={`${from.source} ${from.ref} ${from.commit} ${from.path}`}>
      {from.source} @ {from.commit.slice(0, 7)}
    </code>
  );
}

/**
 * Install skills from a git URL: check first (a dry run shows what would happen), then install; consent to executables.
 */
export function InstallPanel({ onChanged }: { onChanged: () => void }) {
  const [form, setForm] = useState({ source: '', ref: '', path: '', overwrite: false });
  const [result, setResult] = useState<InstallResult>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (dryRun: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      const body = {
        source: form.source,
        ...(form.ref ? { ref: form.ref } : {}),
        ...(form.path ? { path: form.path } : {}),
        overwrite: form.overwrite,
        dry_run: dryRun,
      };
      setResult(await api<InstallResult>('POST', '/skills/install', body));
      if (!dryRun) onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(false);
  };
  const field = (key: 'source' | 'ref' | 'path', label: string, placeholder: string) => (
    <label>
      {label}{' '}
      <input
        value={form[key]}
        placeholder={placeholder}
        onChange={(e) => setForm({ ...form, [key]: e.target.value })}
        required={key === 'source'}
      />
    </label>
  );
  return (
    <Section title="Install from git">
      <form onSubmit={submit} aria-label="Install skills from git">
        {field('source', 'Repository', 'https://github.com/owner/repo or owner/repo')}
        {field('ref', 'Branch, tag or commit', 'default branch')}
        {field('path', 'Folder', 'repository root')}
        <label>
          <input
            type="checkbox"
            checked={form.overwrite}
            onChange={(e) => setForm({ ...form, overwrite: e.target.checked })}
          />{' '}
          Replace skills of the same name
        </label>{' '}
        <button type="button" disabled={busy || !form.source} onClick={() => void run(true)}>
          Check
        </button>{' '}
        <button type="submit" disabled={busy || !form.source}>
          Install
        </button>
      </form>
      <ErrorBox error={error} />
      {result && <InstallReport result={result} />}
    </Section>
  );
}

function InstallReport({ result }: { result: InstallResult }) {
  return (
    <div role="status" aria-label="Install result">
      <p>
        {result.dry_run ? 'Would install' : 'Installed'} from <code>{result.source}</code> {result.ref} @{' '}
        <code>{result.commit.slice(0, 12)}</code>: {result.installed.length} skill(s), {result.refused.length} refused.
      </p>
      <ul aria-label="Installed skills">
        {result.installed.map((s) => (
          <li key={s.name}>
            <strong>{s.name}</strong> ({s.kinds.join(' + ')}){s.replaced && ', replaces the one there'}
            {s.awaiting_consent && !result.dry_run && <ConsentButton id={s.name} />}
          </li>
        ))}
      </ul>
      {result.refused.length > 0 && (
        <ul aria-label="Refused skills">
          {result.refused.map((s) => (
            <li key={s.path}>
              <strong>{s.name ?? s.path}</strong> refused ({s.reason})
              <ul className="problems">
                {s.problems.map((p, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a report's problems, shown once as they came
                  <li key={i} className={p.severity}>
                    <code>
                      {p.file}
                      {p.line !== undefined && `:${p.line}`}
                    </code>{' '}
                    <strong>{p.field}</strong>: {p.message}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** An installed executable skill runs only after consent to the version shown (its digest). */
function ConsentButton({ id }: { id: string }) {
  const [state, setState] = useState<'waiting' | 'allowed' | unknown>('waiting');
  const allow = async () => {
    try {
      const { digest } = await api<{ digest: string }>('GET', `/executable-skills/${enc(id)}`);
      await api('POST', `/executable-skills/${enc(id)}/consent`, { digest });
      setState('allowed');
    } catch (err) {
      setState(err);
    }
  };
  if (state === 'allowed') return <> — allowed to run</>;
  return (
    <>
      {' '}
      — waits for your consent to run:{' '}
      <button type="button" onClick={() => void allow()}>
        Allow {id} to run
      </button>
      {state !== 'waiting' && <ErrorBox error={state} />}
    </>
  );
}
