import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, ApiError, enc } from '../api';
import { ErrorBox, ScrollText, Time, useLoad } from '../ui';
import { DiffView, diffStat } from './DiffView';

interface FileView {
  content: string;
  version: number;
  updated_at: string | null;
}
interface Version {
  version: number;
  at: string;
  reason: string;
  size: number;
  writer?: { via?: string; key?: string; session?: string; source?: string };
}
/** The newer version a refused save or restore reports (409 details.current). */
interface Newer {
  content: string;
  version: number;
  updated_at: string | null;
}

/**
 * One agent file: its text, an editor that saves over the version it started from, the history, compare and restore.
 */
export function AgentFile({
  agent,
  file,
  label,
  editable,
}: {
  agent: string;
  file: string;
  label: string;
  editable: boolean;
}) {
  const base = `/agents/${enc(agent)}/files/${file}`;
  const current = useLoad(() => api<FileView>('GET', base), [base]);
  const history = useLoad(() => api<{ versions: Version[] }>('GET', `${base}/history`), [base]);
  const [editing, setEditing] = useState<{ from: FileView; draft: string } | undefined>();
  const [restoring, setRestoring] = useState<number | undefined>();
  const [notice, setNotice] = useState<string>();
  const reload = () => {
    current.reload();
    history.reload();
  };
  const file$ = current.data;
  return (
    <div className="agent-file">
      <ErrorBox error={current.error ?? history.error} stale={file$ !== undefined} />
      {notice && (
        <p role="status" className="ok">
          {notice}
        </p>
      )}
      {file$ && !editing && (
        <>
          <p className="meta">
            {label} version {file$.version}
            {file$.updated_at && (
              <>
                , updated <Time at={file$.updated_at} />
              </>
            )}
          </p>
          <ScrollText label="File content">{file$.content}</ScrollText>
          {editable && (
            <button
              type="button"
              onClick={() => {
                setNotice(undefined);
                setEditing({ from: file$, draft: file$.content });
              }}
            >
              Edit {label}
            </button>
          )}
        </>
      )}
      {editing && (
        <Editor
          path={base}
          label={label}
          from={editing.from}
          draft={editing.draft}
          onDraft={(draft) => setEditing({ ...editing, draft })}
          onRebase={(newer) => setEditing({ from: newer, draft: editing.draft })}
          onConflict={history.reload}
          onDone={(message) => {
            setEditing(undefined);
            setNotice(message);
            if (message) reload();
          }}
        />
      )}
      <h3>Versions</h3>
      {history.data?.versions.length === 0 && <p>No earlier versions.</p>}
      <ol aria-label="Versions" className="versions">
        {history.data?.versions.map((v) => (
          <li key={v.version}>
            <span>
              v{v.version} <Time at={v.at} />: {v.reason} ({v.size} bytes){v.writer && `, by ${writerText(v.writer)}`}
            </span>{' '}
            {file$ && v.version !== file$.version && (
              <button
                type="button"
                id={`restore-v${v.version}`}
                onClick={() => {
                  setNotice(undefined);
                  setRestoring(v.version);
                }}
                aria-expanded={restoring === v.version}
              >
                Restore v{v.version}
              </button>
            )}
            {restoring === v.version && file$ && (
              <RestorePrompt
                path={base}
                label={label}
                version={v.version}
                current={file$}
                onClose={(message) => {
                  setRestoring(undefined);
                  setNotice(message);
                  if (message) reload();
                  else document.getElementById(`restore-v${v.version}`)?.focus();
                }}
              />
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

function writerText(w: NonNullable<Version['writer']>): string {
  return (
    [w.via, w.key && `key ${w.key}`, w.session && `session ${w.session}`, w.source && `source ${w.source}`]
      .filter(Boolean)
      .join(', ') || 'unknown'
  );
}

/**
 * Edits `from`; the diff against it updates as you type. A save that lost the race shows what won and lets you go on.
 */
function Editor(props: {
  path: string;
  label: string;
  from: FileView;
  draft: string;
  onDraft: (d: string) => void;
  onRebase: (n: Newer) => void;
  onConflict: () => void;
  onDone: (message?: string) => void;
}) {
  const { path, label, from, draft } = props;
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>();
  const [newer, setNewer] = useState<Newer>();
  const [busy, setBusy] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const conflict = useRef<HTMLFieldSetElement>(null);
  useEffect(() => box.current?.focus(), []);
  // A newer version saved meanwhile: focus goes to the box that offers it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: newer is the trigger
  useEffect(() => conflict.current?.focus(), [newer]);
  const stat = diffStat(from.content, draft);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const r = await api<{ version: number }>('PUT', path, {
        content: draft,
        expected_version: from.version,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      });
      props.onDone(`Saved ${label} as version ${r.version}.`);
    } catch (err) {
      const current =
        err instanceof ApiError && err.status === 409
          ? (err.details as { current?: Newer } | undefined)?.current
          : undefined;
      if (current) {
        setNewer(current);
        props.onConflict();
      }
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={save} className="editor" aria-label={`Edit ${label}`}>
      <label htmlFor="file-draft">
        {label}, edited from version {from.version}
      </label>
      <textarea
        id="file-draft"
        ref={box}
        rows={14}
        value={draft}
        onChange={(e) => props.onDraft(e.target.value)}
        spellCheck
      />
      <label htmlFor="file-reason">Why (shown in the history, optional)</label>
      <input
        id="file-reason"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        maxLength={200}
        placeholder="edited by hand"
      />
      <h4 id="draft-diff-h">
        Changes against version {from.version}: {stat.added} line(s) added, {stat.removed} removed
      </h4>
      <DiffView before={from.content} after={draft} label={`Changes against version ${from.version}`} />
      <ErrorBox error={error} />
      {newer && (
        <fieldset className="confirm" aria-label="Newer version" tabIndex={-1} ref={conflict}>
          <p>
            Version {newer.version} was saved while you edited (<Time at={newer.updated_at} />
            ). Nothing of yours was saved. What changes from that version to your text:
          </p>
          <DiffView before={newer.content} after={draft} label={`From version ${newer.version} to your text`} />
          <button
            type="button"
            onClick={() => {
              props.onRebase(newer);
              setNewer(undefined);
              setError(undefined);
            }}
          >
            Keep my text over version {newer.version}
          </button>
          <button type="button" onClick={() => props.onDone()}>
            Discard my changes
          </button>
        </fieldset>
      )}
      <div className="row">
        <button type="submit" disabled={busy || newer !== undefined || draft === from.content}>
          Save {label}
        </button>
        <button type="button" onClick={() => props.onDone()}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Asks before a restore and shows what it changes: the current text becomes the chosen version's again. */
function RestorePrompt({
  path,
  label,
  version,
  current,
  onClose,
}: {
  path: string;
  label: string;
  version: number;
  current: FileView;
  onClose: (message?: string) => void;
}) {
  const old = useLoad(() => api<{ content: string }>('GET', `${path}/history/${version}`), [path, version]);
  const [error, setError] = useState<unknown>();
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (old.data) yes.current?.focus();
  }, [old.data]);
  const restore = async () => {
    setError(undefined);
    try {
      const r = await api<{ version: number }>('POST', `${path}/restore`, {
        version,
        expected_version: current.version,
      });
      onClose(`Restored version ${version} of ${label} as version ${r.version}.`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div
      role="alertdialog"
      aria-label={`Restore version ${version}`}
      className="confirm"
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        onClose();
      }}
    >
      <p>
        Restore version {version} of {label}? It becomes version {current.version + 1}; version {current.version} stays
        in the history. What changes:
      </p>
      <ErrorBox error={old.error ?? error} />
      {old.data && (
        <DiffView
          before={current.content}
          after={old.data.content}
          label={`From version ${current.version} to version ${version}`}
        />
      )}
      <button type="button" ref={yes} disabled={!old.data} onClick={restore}>
        Yes, restore v{version}
      </button>
      <button type="button" onClick={() => onClose()}>
        Cancel
      </button>
    </div>
  );
}
