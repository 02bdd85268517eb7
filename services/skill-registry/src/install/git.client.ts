import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CommitId, ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { PinnedRemote } from './git-host.guard.js';
import { runGit, type GitProcessSettings } from './git-process.js';
import type { GitRemote } from './git-source.js';

export interface GitClientOptions {
  readonly binary: string;
  /** Temporary repositories are made (and removed) here. */
  readonly workDir: string;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly caFile?: string | undefined;
  readonly ssh?: { readonly key: string; readonly knownHosts: string } | undefined;
}

/** One entry of a commit's tree: a file (`blob`, with its mode: 100644/100755 regular, 120000 link) or a submodule. */
export interface TreeEntry {
  readonly path: string;
  readonly mode: string;
  readonly type: 'blob' | 'commit';
  readonly oid: string;
  readonly size: number;
}

export const LINK_MODE = '120000';
const FETCHED = 'refs/alfred/fetched';

/**
 * The system git, used safely: a shallow fetch of one commit into a new bare repository (no checkout, so no hooks,
 * no submodules, no LFS smudge, no files of the repository's choosing on disk), with transfer checks of every
 * object, only the source's own protocol allowed, redirects not followed, and one time and size budget per source.
 */
export class GitClient {
  constructor(private readonly options: GitClientOptions) {}

  /**
   * Removes temporary repositories a stopped process left behind (older than a day: another instance's are younger).
   */
  async sweep(now = Date.now()): Promise<void> {
    for (const entry of await readdir(this.options.workDir).catch(() => [] as string[])) {
      const path = join(this.options.workDir, entry);
      const info = await stat(path).catch(() => undefined);
      if (info && now - info.mtimeMs > 86_400_000) await rm(path, { recursive: true, force: true });
    }
  }

  /** Resolves `ref` (the remote's default branch when absent) and fetches that one commit. */
  async fetch(remote: GitRemote, pinned: PinnedRemote, ref: string | undefined): Promise<FetchedRepository> {
    await mkdir(this.options.workDir, { recursive: true });
    const dir = await mkdtemp(join(this.options.workDir, 'fetch-'));
    const repo = new FetchedRepository(
      this.settings(dir, pinned),
      dir,
      remote.source,
      Date.now() + this.options.timeoutMs,
    );
    try {
      await repo.git(['init', '--bare', '--quiet'], 'preparing a repository', dir);
      const target = await this.resolve(repo, remote, pinned, ref);
      const args = [
        'fetch',
        '--quiet',
        '--depth=1',
        '--no-tags',
        '--no-recurse-submodules',
        '--no-write-fetch-head',
        pinned.url,
      ];
      await repo.git(
        [...this.config(remote, pinned), ...args, `+${target.fetch}:${FETCHED}`],
        `fetching ${ref ?? target.ref} of ${remote.source}`,
        undefined,
        this.options.maxBytes,
      );
      const commit = (await repo.git(['rev-parse', '--verify', `${FETCHED}^{commit}`], 'reading the fetched commit'))
        .toString('utf8')
        .trim();
      repo.pin(commit, target.ref);
      return repo;
    } catch (err) {
      await repo.dispose();
      throw err;
    }
  }

  /** The ref to fetch and the name to record: a tag or branch by its full name, a commit id as itself. */
  private async resolve(repo: FetchedRepository, remote: GitRemote, pinned: PinnedRemote, ref: string | undefined) {
    const patterns =
      ref === undefined ? ['HEAD'] : ref.startsWith('refs/') ? [ref] : [`refs/tags/${ref}`, `refs/heads/${ref}`];
    const listed = (
      await repo.git(
        [...this.config(remote, pinned), 'ls-remote', '--symref', pinned.url, ...patterns],
        `reading the refs of ${remote.source}`,
      )
    )
      .toString('utf8')
      .split('\n')
      .filter(Boolean);
    if (ref === undefined) {
      const symref = listed.map((l) => /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(l)).find(Boolean);
      if (!listed.some((l) => l.endsWith('\tHEAD')))
        throw notFound(remote.source, 'the repository has no default branch (it may be empty)');
      return { fetch: 'HEAD', ref: symref?.[1] ?? 'HEAD' };
    }
    const names = new Set(listed.map((l) => l.split('\t')[1]));
    const full = patterns.find((p) => names.has(p));
    if (full) return { fetch: full, ref };
    if (CommitId.safeParse(ref).success) return { fetch: ref, ref };
    throw notFound(remote.source, `no branch or tag "${ref}" in ${remote.source} (a commit is given by its full id)`);
  }

  private settings(dir: string, pinned: PinnedRemote): GitProcessSettings {
    const env: Record<string, string> = { GIT_DIR: join(dir, 'repo.git') };
    if (this.options.ssh) env.GIT_SSH_COMMAND = sshCommand(this.options.ssh, pinned.sshHostAlias);
    return { binary: this.options.binary, home: dir, env };
  }

  private config(remote: GitRemote, pinned: PinnedRemote): string[] {
    const settings = [
      'protocol.allow=never',
      `protocol.${remote.scheme}.allow=always`,
      'core.hooksPath=/dev/null',
      'transfer.fsckObjects=true',
      'fetch.recurseSubmodules=false',
      'http.followRedirects=false',
      'http.lowSpeedLimit=1024',
      'http.lowSpeedTime=30',
      'credential.helper=',
      ...(this.options.caFile ? [`http.sslCAInfo=${this.options.caFile}`] : []),
      ...pinned.config,
    ];
    return settings.flatMap((s) => ['-c', s]);
  }
}

/** One fetched commit: its tree and blobs, read with git; removed with `dispose`. */
export class FetchedRepository {
  private fetched?: { commit: string; ref: string };
  private readonly cache = new Map<string, Buffer>();

  constructor(
    private readonly settings: GitProcessSettings,
    private readonly dir: string,
    private readonly source: string,
    private readonly deadline: number,
  ) {}

  get commit(): string {
    return this.fetched!.commit;
  }

  /** The branch or tag followed (the default branch's name when none was asked for), or the commit id given. */
  get ref(): string {
    return this.fetched!.ref;
  }

  pin(commit: string, ref: string): void {
    this.fetched = { commit, ref };
  }

  /** Every file of the commit (recursively), with modes and sizes. */
  async tree(): Promise<TreeEntry[]> {
    const out = await this.git(['ls-tree', '-r', '-l', '-z', '--full-tree', this.commit], 'listing the commit');
    return out
      .toString('utf8')
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const m = /^(\d{6}) (blob|commit) ([0-9a-f]+) +(-|\d+)\t([\s\S]*)$/.exec(line);
        if (!m) throw new AlfredError(ErrorCode.Internal, `unexpected git ls-tree line: ${line.slice(0, 200)}`);
        return {
          mode: m[1]!,
          type: m[2] as TreeEntry['type'],
          oid: m[3]!,
          size: m[4] === '-' ? 0 : Number(m[4]),
          path: m[5]!,
        };
      });
  }

  /**
   * The contents of the given blobs (sizes were checked against the limits from the tree first). Read once: a caller
   * that asks for many at first (every folder's files) spares one git process per skill later.
   */
  async blobs(oids: readonly string[]): Promise<Map<string, Buffer>> {
    const missing = [...new Set(oids)].filter((o) => !this.cache.has(o));
    if (missing.length > 0) {
      const out = await this.git(
        ['cat-file', '--batch'],
        'reading files',
        undefined,
        undefined,
        `${missing.join('\n')}\n`,
      );
      let at = 0;
      while (at < out.length) {
        const eol = out.indexOf(0x0a, at);
        const [oid, type, size] = out.subarray(at, eol).toString('utf8').split(' ');
        at = eol + 1;
        if (type !== 'blob') continue;
        this.cache.set(oid!, out.subarray(at, at + Number(size)));
        at += Number(size) + 1;
      }
    }
    return new Map(oids.filter((o) => this.cache.has(o)).map((o) => [o, this.cache.get(o)!]));
  }

  async git(
    args: readonly string[],
    doing: string,
    cwd = this.dir,
    maxBytes?: number,
    stdin?: string,
  ): Promise<Buffer> {
    const watch = maxBytes === undefined ? undefined : { dir: this.dir, maxBytes };
    return runGit(this.settings, args, {
      cwd,
      deadline: this.deadline,
      doing,
      source: this.source,
      ...(watch ? { watch } : {}),
      ...(stdin === undefined ? {} : { stdin }),
    });
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

function notFound(source: string, message: string): AlfredError {
  return new AlfredError(ErrorCode.NotFound, message, { source, reason: 'not_found' });
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

function sshCommand(ssh: { key: string; knownHosts: string }, alias: string | undefined): string {
  const options = [
    '-F /dev/null',
    `-i ${quote(ssh.key)}`,
    '-o IdentitiesOnly=yes',
    '-o IdentityAgent=none',
    '-o BatchMode=yes',
  ];
  options.push('-o StrictHostKeyChecking=yes', `-o UserKnownHostsFile=${quote(ssh.knownHosts)}`);
  if (alias) options.push(`-o HostKeyAlias=${quote(alias)}`);
  return `ssh ${options.join(' ')}`;
}
