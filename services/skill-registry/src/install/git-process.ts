import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

/** Where git and ssh are looked for: fixed, so nothing of the registry's own environment reaches git. */
const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';
const STDERR_KEEP = 16 * 1024;
const WATCH_EVERY_MS = 200;

export interface GitRunOptions {
  readonly cwd: string;
  /** Epoch ms by which the whole fetch must be done (one budget for every git call of a source). */
  readonly deadline: number;
  /** A folder whose size may not pass `maxBytes` while git runs (the repository being fetched into). */
  readonly watch?: { readonly dir: string; readonly maxBytes: number };
  readonly stdin?: string;
  /** What the error says git was doing ("fetching …"). */
  readonly doing: string;
  readonly source: string;
}

/** How git is run: the binary, the environment (never the registry's own) and `-c` settings before every command. */
export interface GitProcessSettings {
  readonly binary: string;
  readonly home: string;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs one git command in its own process group with a fixed environment: no system or global config, no prompts,
 * no LFS smudge, only the protocols given. It is killed (with everything it started) at the deadline or when the
 * watched folder outgrows its limit, and failures become errors that say what happened in git's own words.
 */
export async function runGit(
  settings: GitProcessSettings,
  args: readonly string[],
  options: GitRunOptions,
): Promise<Buffer> {
  const remaining = options.deadline - Date.now();
  if (remaining <= 0) throw timedOut(options);
  const child = spawn(settings.binary, args, {
    cwd: options.cwd,
    env: gitEnv(settings),
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  let err = '';
  let killedFor: 'timeout' | 'size' | undefined;
  const kill = (why: 'timeout' | 'size') => {
    killedFor ??= why;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const timer = setTimeout(() => kill('timeout'), remaining);
  const watcher = options.watch
    ? setInterval(() => void overLimit(options.watch!).then((over) => over && kill('size')), WATCH_EVERY_MS)
    : undefined;
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString('utf8')).slice(-STDERR_KEEP)));
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin ?? '');
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve(status));
  })
    .catch((cause: NodeJS.ErrnoException) => {
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        `git could not be started (${settings.binary}): ${cause.message}`,
        { reason: 'git_missing' },
        { cause },
      );
    })
    .finally(() => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
    });
  if (killedFor === 'timeout') throw timedOut(options);
  // A fetch faster than one watch interval is measured once more at its end.
  if (killedFor === 'size' || (code === 0 && options.watch && (await overLimit(options.watch))))
    throw tooLarge(options, options.watch!.maxBytes);
  if (code !== 0) throw gitFailure(options, err);
  return Buffer.concat(out);
}

function gitEnv(settings: GitProcessSettings): Record<string, string> {
  return {
    PATH: SAFE_PATH,
    HOME: settings.home,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_PROTOCOL_FROM_USER: '0',
    ...settings.env,
  };
}

/**
 * Whether a folder holds more than `maxBytes` (files counted by size; the repository being fetched is small in files).
 */
async function overLimit(watch: { dir: string; maxBytes: number }): Promise<boolean> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else total += (await stat(path).catch(() => undefined))?.size ?? 0;
      if (total > watch.maxBytes) return;
    }
  };
  await walk(watch.dir);
  return total > watch.maxBytes;
}

const timedOut = (o: GitRunOptions) =>
  new AlfredError(
    ErrorCode.ServiceTimeout,
    `${o.doing} did not finish within the install time limit (ALFRED_SKILLS_INSTALL_TIMEOUT_MS)`,
    {
      source: o.source,
      reason: 'timeout',
    },
  );

const tooLarge = (o: GitRunOptions, limit: number) =>
  new AlfredError(
    ErrorCode.PayloadTooLarge,
    `${o.doing} was stopped: the repository is larger than ${limit} bytes (ALFRED_SKILLS_INSTALL_MAX_BYTES)`,
    {
      source: o.source,
      limit,
      reason: 'too_large',
    },
  );

/** What git (and ssh, curl, the server) say when access is refused, or the repository or ref is not there. */
const anyOf = (phrases: string[]) => new RegExp(phrases.join('|'), 'i');
const SAYS_REFUSED = anyOf([
  'could not read Username',
  'Authentication failed',
  'terminal prompts disabled',
  'Permission denied',
  'Host key verification failed',
  'HTTP 40[13]',
  'returned error: 40[13]',
]);
const SAYS_NOT_FOUND = anyOf([
  'not found',
  'no such repository',
  'does not appear to be a git repository',
  'No such file or directory',
  'not a git repository',
  'HTTP 404',
  'returned error: 404',
  "couldn't find remote ref",
  'not our ref',
  'no such remote ref',
]);

/** Git's failure as the API's error: a missing repository or ref is 404, refused access 403, anything else 503. */
function gitFailure(o: GitRunOptions, stderr: string): AlfredError {
  const said = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('hint:'))
    .slice(-3)
    .join(' ');
  const details = { source: o.source, git: said.slice(0, 2000) };
  if (SAYS_REFUSED.test(stderr)) {
    return new AlfredError(
      ErrorCode.Forbidden,
      `${o.doing} was refused: the repository needs credentials or its host key is unknown (${said})`,
      { ...details, reason: 'access_refused' },
    );
  }
  if (/fsck|bad object|invalid object|zeroPaddedFilemode|badTimezone|hasDotgit/i.test(stderr)) {
    return new AlfredError(
      ErrorCode.BadRequest,
      `${o.doing}: the repository holds objects git's transfer checks refuse (${said})`,
      { ...details, reason: 'invalid_repository' },
    );
  }
  if (/redirect/i.test(stderr) || /returned error: 30[1278]/.test(stderr)) {
    return new AlfredError(
      ErrorCode.BadRequest,
      `${o.doing}: the server redirects elsewhere; give the URL it redirects to (${said})`,
      { ...details, reason: 'redirected' },
    );
  }
  if (SAYS_NOT_FOUND.test(stderr)) {
    return new AlfredError(ErrorCode.NotFound, `${o.doing} failed: ${said || 'not found'}`, {
      ...details,
      reason: 'not_found',
    });
  }
  return new AlfredError(ErrorCode.ServiceUnavailable, `${o.doing} failed: ${said || 'git exited with an error'}`, {
    ...details,
    reason: 'unreachable',
  });
}
