import { useEffect, useRef, useState } from 'react';
import { api, enc, query } from '../api';
import { ErrorBox, Json, ScrollText, Section, useLoad } from '../ui';
import { InstallPanel, InstalledFromText, type InstalledFrom } from './SkillInstall';

interface Problem {
  severity: string;
  field: string;
  message: string;
  line?: number;
  column?: number;
  file: string;
}
interface SkillSummary {
  name: string;
  description: string;
  source: string;
  location: string;
  version: string;
  body_lines: number;
  warnings: Problem[];
  installed_from?: InstalledFrom;
}
interface SkillIndex {
  skills: SkillSummary[];
  shadowed: { name: string; path: string; shadowed_by: string }[];
  skipped: { path: string; reason: string; problems: Problem[] }[];
  warnings: Problem[];
  budget: number | null;
}
interface Rendered {
  text: string;
  truncated: { shortened: number; dropped: string[] };
  budget: number | null;
}

/**
 * Skills: the level-1 index as the agent sees it (with the budget's cuts), bodies and resources, problems, executables.
 */
export function SkillsView() {
  const [budget, setBudget] = useState('');
  const [selected, setSelected] = useState<string>();
  const index = useLoad(
    () =>
      Promise.all([
        api<SkillIndex>('GET', `/skills${query({ budget })}`),
        api<Rendered>('GET', `/skills${query({ format: 'markdown', budget })}`),
      ]),
    [budget],
  );
  const [idx, rendered] = index.data ?? [];

  return (
    <div className="stack">
      <InstallPanel onChanged={index.reload} />
      <Section title="Level-1 index">
        <label>
          Size budget (characters; empty for the configured one){' '}
          <input type="number" min={0} value={budget} onChange={(e) => setBudget(e.target.value)} />
        </label>
        <ErrorBox error={index.error} stale={index.data !== undefined} />
        {rendered && (
          <>
            <p role="status">
              {rendered.truncated.shortened} description(s) shortened, {rendered.truncated.dropped.length} skill(s)
              dropped
              {rendered.truncated.dropped.length > 0 && `: ${rendered.truncated.dropped.join(', ')}`} (budget{' '}
              {rendered.budget ?? 'none'})
            </p>
            <ScrollText label="Index as the agent sees it">{rendered.text}</ScrollText>
          </>
        )}
        {idx && (
          <table aria-label="Skills" className="responsive">
            <thead>
              <tr>
                <th scope="col">Skill</th>
                <th scope="col">Source</th>
                <th scope="col">Installed from (commit)</th>
                <th scope="col">Description</th>
                <th scope="col">In the index</th>
                <th scope="col">Warnings</th>
              </tr>
            </thead>
            <tbody>
              {idx.skills.map((s) => (
                <tr key={s.name}>
                  <th scope="row">
                    <button
                      type="button"
                      className="link"
                      onClick={() => setSelected(s.name)}
                      aria-pressed={selected === s.name}
                    >
                      {s.name}
                    </button>
                  </th>
                  <td data-label="Source">{s.source}</td>
                  <td data-label="Installed from (commit)">
                    <InstalledFromText from={s.installed_from} />
                  </td>
                  <td data-label="Description">{s.description}</td>
                  <td data-label="In the index">
                    {rendered?.truncated.dropped.includes(s.name) ? 'dropped by the budget' : 'yes'}
                  </td>
                  <td data-label="Warnings">
                    {s.warnings.length > 0 ? (
                      <Problems problems={s.warnings} label={`Warnings of ${s.name}`} />
                    ) : (
                      'none'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      {idx && <ProblemsPanel index={idx} />}
      {selected && <SkillDetail name={selected} />}
      <ExecutablePanel />
    </div>
  );
}

function Problems({ problems, label }: { problems: Problem[]; label: string }) {
  return (
    <ul className="problems" aria-label={label}>
      {problems.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a report's problems, shown once as they came
        <li key={i} className={p.severity}>
          <code>
            {p.file}
            {p.line !== undefined && `:${p.line}`}
            {p.column !== undefined && `:${p.column}`}
          </code>{' '}
          <strong>{p.field}</strong> ({p.severity}): {p.message}
        </li>
      ))}
    </ul>
  );
}

function ProblemsPanel({ index }: { index: SkillIndex }) {
  return (
    <Section title="Problems and shadowing">
      {index.skipped.length === 0 && index.warnings.length === 0 && index.shadowed.length === 0 && (
        <p>No broken, shadowed or warned-about skills.</p>
      )}
      {index.skipped.length > 0 && (
        <>
          <h3>Broken skills (not offered to agents)</h3>
          <ul aria-label="Broken skills">
            {index.skipped.map((s) => (
              <li key={s.path}>
                <code>{s.path}</code>: {s.reason}
                <Problems problems={s.problems} label={`Problems of ${s.path}`} />
              </li>
            ))}
          </ul>
        </>
      )}
      {index.warnings.length > 0 && (
        <>
          <h3>Root warnings</h3>
          <Problems problems={index.warnings} label="Root warnings" />
        </>
      )}
      {index.shadowed.length > 0 && (
        <>
          <h3>Shadowed skills (a skill of the same name in an earlier root wins)</h3>
          <ul aria-label="Shadowed skills">
            {index.shadowed.map((s) => (
              <li key={s.path}>
                <strong>{s.name}</strong> at <code>{s.path}</code> is shadowed by <code>{s.shadowed_by}</code>
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}

function SkillDetail({ name }: { name: string }) {
  const [resource, setResource] = useState<string>();
  const detail = useLoad(
    () =>
      Promise.all([
        api<{ body: string; location: string }>('GET', `/skills/${enc(name)}`),
        api<{ resources: { path: string; size?: number }[] }>('GET', `/skills/${enc(name)}/resources`),
      ]),
    [name],
  );
  const content = useLoad(
    () =>
      resource
        ? api<{ content: string }>('GET', `/skills/${enc(name)}/resources/${resource.split('/').map(enc).join('/')}`)
        : Promise.resolve(undefined),
    [name, resource],
  );
  const [body, resources] = detail.data ?? [];
  // Opening a skill brings its detail into view and moves focus there (it sits below the whole index).
  const heading = useRef<HTMLHeadingElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: name (the skill opened) is the trigger
  useEffect(() => {
    heading.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus({ preventScroll: true });
  }, [name]);
  return (
    <Section title={`Skill ${name}`} id="h-skill-detail" headingRef={heading}>
      <ErrorBox error={detail.error} />
      {body && (
        <>
          <p className="meta">{body.location}</p>
          <ScrollText label={`Body of ${name}`}>{body.body}</ScrollText>
        </>
      )}
      {resources && (
        <>
          <h3>Resources</h3>
          {resources.resources.length === 0 && <p>No resources.</p>}
          <ul>
            {resources.resources.map((r) => (
              <li key={r.path}>
                <button type="button" className="link" onClick={() => setResource(r.path)}>
                  {r.path}
                </button>
              </li>
            ))}
          </ul>
          {content.data && <pre className="json">{content.data.content}</pre>}
          <ErrorBox error={content.error} />
        </>
      )}
    </Section>
  );
}

function ExecutablePanel() {
  const list = useLoad(
    () => api<{ skills: { id: string; description?: string; version?: string }[] }>('GET', '/executable-skills'),
    [],
  );
  const [selected, setSelected] = useState<string>();
  return (
    <Section title="Executable skills">
      <ErrorBox error={list.error} />
      {list.data?.skills.length === 0 && <p>No executable skills.</p>}
      <ul className="picklist">
        {list.data?.skills.map((s) => (
          <li key={s.id}>
            <button type="button" aria-pressed={selected === s.id} onClick={() => setSelected(s.id)}>
              {s.id}
            </button>{' '}
            {s.description}
          </li>
        ))}
      </ul>
      {selected && <ExecutableDetail id={selected} />}
    </Section>
  );
}

interface Execution {
  executionId: string;
  startedAt: string;
  durationMs: number;
  outcome: string;
  error?: string;
  stdout: string;
  stderr: string;
  logs: string[];
  runner: string;
}

function ExecutableDetail({ id }: { id: string }) {
  const d = useLoad(
    () =>
      Promise.all([
        api<unknown>('GET', `/executable-skills/${enc(id)}`),
        api<{ executions: Execution[]; total: number }>('GET', `/executable-skills/${enc(id)}/executions?limit=20`),
      ]),
    [id],
  );
  const [manifest, runs] = d.data ?? [];
  return (
    <div>
      <ErrorBox error={d.error} />
      {manifest !== undefined && (
        <>
          <h3>Manifest of {id}</h3>
          <Json value={manifest} label={`Manifest of ${id}`} />
        </>
      )}
      {runs && (
        <>
          <h3>Recent executions ({runs.total})</h3>
          <table aria-label={`Executions of ${id}`} className="responsive">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
                <th scope="col">Logs</th>
              </tr>
            </thead>
            <tbody>
              {runs.executions.map((e) => (
                <tr key={e.executionId}>
                  <td data-label="Started">{e.startedAt}</td>
                  <td data-label="Outcome">
                    {e.outcome}
                    {e.error && `: ${e.error}`}
                  </td>
                  <td data-label="Duration">{Math.round(e.durationMs)} ms</td>
                  <td data-label="Logs">
                    <pre className="json">{[...e.logs, e.stdout, e.stderr].filter(Boolean).join('\n') || '(none)'}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
