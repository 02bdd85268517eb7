import { parseArgs } from 'node:util';
import { z } from 'zod';
import type {
  InstalledSkill,
  RefusedSkill,
  SkillInstallResult,
  SkillProblem,
  SkillSourceUpdate,
  SkillUpdateResult,
} from '#contracts';
import { ConfigError, parseEnv } from '#config';
import { ExitCode, type CommandIo } from './validate.command.js';

/** What the skills commands read from the environment: where Alfred runs and who they act as. */
export const skillsCliEnv = z.object({
  ALFRED_URL: z
    .url({ protocol: /^https?$/ })
    .default('http://127.0.0.1:8080')
    .describe('the Alfred the `alfred skills` commands talk to'),
  ALFRED_API_KEY: z.string().min(1).optional().describe('the API key `alfred skills` sends (when keys are required)'),
  ALFRED_AGENT: z.string().min(1).default('alfred').describe('the agent the `alfred skills` commands act for'),
});

/** The commands' io: the launcher's, plus the environment it hands over (read once, here). */
export interface RemoteCommandIo extends CommandIo {
  readonly env: NodeJS.ProcessEnv;
}

const USAGE = {
  add:
    'usage: alfred skills add <source> [--ref <branch|tag|commit>] [--path <folder>] [--skill <name>]... ' +
    '[--overwrite] [--dry-run]',
  update: 'usage: alfred skills update [<name>...] [--source <source>]',
  remove: 'usage: alfred skills remove <name>... [--yes]',
};

/** `alfred skills add`: installs a git repository's skills into the running Alfred, one line per skill. */
export async function runSkillsAddCommand(args: string[], io: RemoteCommandIo): Promise<number> {
  const parsed = parse(
    args,
    {
      ref: { type: 'string' },
      path: { type: 'string' },
      skill: { type: 'string', multiple: true },
      overwrite: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
    },
    io,
    USAGE.add,
  );
  if (parsed?.positionals.length !== 1) return usage(io, USAGE.add, parsed ? 'give exactly one source' : undefined);
  const api = client(io);
  if (!api) return ExitCode.Usage;
  const v = parsed.values;
  const source = parsed.positionals[0]!;
  io.out(`fetching ${source}${v.ref ? ` at ${v.ref}` : ''}${v.path ? ` (${v.path})` : ''} …`);
  const body = {
    source,
    ...(v.ref ? { ref: v.ref } : {}),
    ...(v.path ? { path: v.path } : {}),
    ...(v.skill ? { skills: v.skill } : {}),
    overwrite: v.overwrite === true,
    dry_run: v['dry-run'] === true,
  };
  const result = await api<SkillInstallResult>('POST', '/skills/install', body);
  if (!result.ok) return result.code;
  const r = result.value;
  io.out(`${r.source} ${r.ref} @ ${r.commit.slice(0, 12)}${r.dry_run ? ' (dry run: nothing changed)' : ''}`);
  for (const s of r.installed) io.out(installedLine(s, r.dry_run));
  for (const s of r.refused) for (const l of refusedLines(s)) io.out(l);
  for (const w of r.warnings) io.out(`  ! ${where(w)}: ${w.message}`);
  io.out(`${r.installed.length} ${r.dry_run ? 'would be installed' : 'installed'}, ${r.refused.length} refused`);
  return r.refused.length > 0 ? ExitCode.Failed : ExitCode.Ok;
}

/** `alfred skills update [name...] [--source s]`: moves installed skills to their ref's newest commit. */
export async function runSkillsUpdateCommand(args: string[], io: RemoteCommandIo): Promise<number> {
  const parsed = parse(args, { source: { type: 'string' } }, io, USAGE.update);
  if (!parsed) return ExitCode.Usage;
  if (parsed.values.source && parsed.positionals.length > 0)
    return usage(io, USAGE.update, 'give names or --source, not both');
  const api = client(io);
  if (!api) return ExitCode.Usage;
  const calls =
    parsed.positionals.length > 0
      ? parsed.positionals.map((name) => ['POST', `/skills/${encodeURIComponent(name)}/update`, {}] as const)
      : [['POST', '/skills/update', parsed.values.source ? { source: parsed.values.source } : {}] as const];
  let refused = 0;
  for (const [method, path, body] of calls) {
    const what =
      path === '/skills/update'
        ? (parsed.values.source ?? 'every installed source')
        : decodeURIComponent(path.split('/')[2]!);
    io.out(`updating ${what} …`);
    const result = await api<SkillUpdateResult>(method, path, body);
    if (!result.ok) return result.code;
    for (const source of result.value.sources) refused += printUpdate(source, io);
  }
  return refused > 0 ? ExitCode.Failed : ExitCode.Ok;
}

/** `alfred skills remove <name...> [--yes]`: without --yes, shows what would be removed and removes nothing. */
export async function runSkillsRemoveCommand(args: string[], io: RemoteCommandIo): Promise<number> {
  const parsed = parse(args, { yes: { type: 'boolean', short: 'y' } }, io, USAGE.remove);
  if (!parsed || parsed.positionals.length === 0)
    return usage(io, USAGE.remove, parsed ? 'name at least one skill' : undefined);
  const api = client(io);
  if (!api) return ExitCode.Usage;
  let failed = 0;
  for (const name of parsed.positionals) {
    const path = `/skills/${encodeURIComponent(name)}${parsed.values.yes ? '?confirm=true' : ''}`;
    const result = await api<{ kinds: string[] }>('DELETE', path, undefined, !parsed.values.yes);
    if (result.ok) io.out(`✓ removed ${name} (${result.value.kinds.join(' + ')})`);
    else if (result.preview) io.out(`? ${name}: ${describePreview(result.preview)}; repeat with --yes to remove it`);
    else failed++;
  }
  return failed > 0 || !parsed.values.yes ? ExitCode.Failed : ExitCode.Ok;
}

type ApiResult<T> = { ok: true; value: T } | { ok: false; code: number; preview?: Record<string, unknown> };
type Api = <T>(method: string, path: string, body?: unknown, expectPreview?: boolean) => Promise<ApiResult<T>>;

/** A JSON client of the running Alfred; failures are printed (with the API's own message) and become exit codes. */
function client(io: RemoteCommandIo): Api | undefined {
  let env: z.output<typeof skillsCliEnv>;
  try {
    env = parseEnv(skillsCliEnv, io.env);
  } catch (err) {
    io.err(err instanceof ConfigError ? err.message : String(err));
    return undefined;
  }
  const headers: Record<string, string> = {
    'x-alfred-agent': env.ALFRED_AGENT,
    ...(env.ALFRED_API_KEY ? { authorization: `Bearer ${env.ALFRED_API_KEY}` } : {}),
  };
  return async <T>(method: string, path: string, body?: unknown, expectPreview = false): Promise<ApiResult<T>> => {
    let res: Response;
    try {
      res = await fetch(new URL(path, env.ALFRED_URL), {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      io.err(
        `cannot reach Alfred at ${env.ALFRED_URL} (${(err as Error).cause ?? (err as Error).message}); is it ` +
          `running? (ALFRED_URL)`,
      );
      return { ok: false, code: ExitCode.Failed };
    }
    const json = (await res.json().catch(() => undefined)) as
      | { error?: { code: string; message: string; details?: Record<string, unknown> } }
      | undefined;
    if (res.ok) return { ok: true, value: json as T };
    if (expectPreview && res.status === 409 && json?.error?.details?.confirm_required)
      return { ok: false, code: ExitCode.Failed, preview: json.error.details };
    io.err(`${res.status} ${json?.error?.code ?? ''}: ${json?.error?.message ?? res.statusText}`);
    return { ok: false, code: ExitCode.Failed };
  };
}

function parse<O extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>>(
  args: string[],
  options: O,
  io: CommandIo,
  usageText: string,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    usage(io, usageText, (err as Error).message);
    return undefined;
  }
}

function usage(io: CommandIo, text: string, problem?: string): number {
  if (problem) io.err(problem);
  io.err(text);
  io.err(
    'Alfred is reached at ALFRED_URL (default http://127.0.0.1:8080) with ALFRED_API_KEY, as the agent ALFRED_AGENT.',
  );
  return ExitCode.Usage;
}

function installedLine(s: InstalledSkill, dry: boolean): string {
  const notes = [
    s.kinds.join(' + '),
    ...(s.replaced ? ['replaces the one there'] : []),
    ...(s.awaiting_consent ? [`runs after consent: POST /executable-skills/${s.name}/consent`] : []),
  ];
  return `✓ ${dry ? 'would install' : 'installed'} ${s.name} (${notes.join('; ')})`;
}

function refusedLines(s: RefusedSkill): string[] {
  const more = s.more_problems ? [`    … ${s.more_problems} more`] : [];
  return [
    `✗ refused ${s.name ?? s.path} (${s.reason})`,
    ...s.problems.map((p) => `    ${where(p)}: ${p.field}: ${p.message}`),
    ...more,
  ];
}

function printUpdate(u: SkillSourceUpdate, io: CommandIo): number {
  io.out(`${u.source} ${u.ref} @ ${u.commit.slice(0, 12)}`);
  for (const c of u.updated) {
    const files = [
      ...c.files.added.map((f) => `+${f}`),
      ...c.files.removed.map((f) => `-${f}`),
      ...c.files.changed.map((f) => `~${f}`),
    ].join(' ');
    io.out(
      `↑ updated ${c.name} ${c.from_commit.slice(0, 7)} → ${c.to_commit.slice(0, 7)} ` +
        `(${files})${c.awaiting_consent ? '; runs after consent again' : ''}`,
    );
    for (const line of c.diff.split('\n').filter(Boolean)) io.out(`    ${line}`);
  }
  for (const name of u.unchanged) io.out(`= ${name} unchanged`);
  for (const s of u.added) io.out(installedLine(s, false));
  for (const name of u.gone_upstream)
    io.out(`! ${name} is no longer in the source (kept; alfred skills remove ${name} removes it)`);
  for (const s of u.refused) for (const l of refusedLines(s)) io.out(l);
  return u.refused.length;
}

function describePreview(p: Record<string, unknown>): string {
  const from = p.installed_from as { source?: string; commit?: string } | undefined;
  return (
    `would remove ${(p.kinds as string[]).join(' + ')} at ` +
    `${String(p.location)}${from ? ` (installed from ${from.source} @ ${from.commit?.slice(0, 7)})` : ''}`
  );
}

const where = (p: SkillProblem) => `${p.file}${p.line ? `:${p.line}` : ''}`;
