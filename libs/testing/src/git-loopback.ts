import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './own-servers.js';
import { tcpReachable } from './reachability.js';

const run = promisify(execFile);
const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

/** Whether git (with `git daemon` and `git http-backend`) and openssl are here: the loopback git servers need them. */
export function gitServersAvailable(): { available: boolean; reason?: string } {
  for (const [tool, args] of [
    ['git', ['--version']],
    ['openssl', ['version']],
    [HTTP_BACKEND, []],
  ] as const) {
    const probe = spawnSync(tool, [...args], {
      stdio: 'ignore',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', REQUEST_METHOD: 'GET' },
    });
    if (probe.error) return { available: false, reason: `${tool} is missing (apt-get install git openssl)` };
  }
  return { available: true };
}

/**
 * `describe` for suites that need real git servers: skipped with a printed reason when git is missing, failing under
 * CI.
 */
export function describeWithGit(name: string, fn: () => void): void {
  const status = gitServersAvailable();
  if (status.available) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') throw new Error(`${name}: ${status.reason} — required in CI`);
  console.warn(`[skip] ${name}: ${status.reason}`);
  describe.skip(name, fn);
}

/** A file of a fixture commit: text, bytes, or a symbolic link to `link`. */
export type FixtureFile = string | Buffer | { readonly link: string };

/** Bare repositories under one folder, built from fixture commits with the real git. */
export class GitFixtures {
  private constructor(readonly base: string) {}

  static async create(): Promise<GitFixtures> {
    const base = await mkdtemp(join(tmpdir(), 'alfred-git-'));
    await mkdir(join(base, 'repos'));
    return new GitFixtures(base);
  }

  /** Where the bare repositories live (git daemon's base path, http-backend's project root). */
  get root(): string {
    return join(this.base, 'repos');
  }

  /** Commits `files` (replacing the whole tree) on `branch` of repos/<name>.git; resolves to the commit id. */
  async commit(
    name: string,
    files: Record<string, FixtureFile>,
    message = 'fixture',
    branch = 'main',
  ): Promise<string> {
    const bare = join(this.root, `${name}.git`);
    const work = join(this.base, 'work', name);
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'fixture',
      GIT_AUTHOR_EMAIL: 'f@example.com',
      GIT_COMMITTER_NAME: 'fixture',
      GIT_COMMITTER_EMAIL: 'f@example.com',
    };
    const git = (args: string[], cwd = work) => run('git', args, { cwd, env });
    await mkdir(work, { recursive: true });
    if (!(await exists(join(bare, 'HEAD')))) {
      await git(['init', '--quiet', '--bare', `--initial-branch=${branch}`, bare], this.base);
      await git(['init', '--quiet', `--initial-branch=${branch}`]);
      await git(['remote', 'add', 'origin', bare]);
    }
    await run('git', ['checkout', '--quiet', '-B', branch], { cwd: work, env }).catch(() => undefined);
    await git(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '.']);
    for (const entry of await readdirSafe(work))
      if (entry !== '.git') await rm(join(work, entry), { recursive: true, force: true });
    for (const [path, content] of Object.entries(files)) {
      const file = join(work, path);
      await mkdir(dirname(file), { recursive: true });
      if (typeof content === 'object' && !Buffer.isBuffer(content)) await symlink(content.link, file);
      else await writeFile(file, content);
    }
    await git(['add', '-A']);
    await git(['commit', '--quiet', '--allow-empty', '-m', message]);
    await git(['push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`]);
    return (await git(['rev-parse', 'HEAD'])).stdout.trim();
  }

  async tag(name: string, tag: string, commit: string): Promise<void> {
    await run('git', ['--git-dir', join(this.root, `${name}.git`), 'tag', '-f', tag, commit]);
  }

  async remove(): Promise<void> {
    await rm(this.base, { recursive: true, force: true });
  }
}

/** A loopback server: its base URL (repositories at `<url>/<name>.git`) and how to stop it. */
export interface GitServer {
  readonly url: string;
  /** The https server's certificate (PEM file), for git's http.sslCAInfo. */
  readonly caFile?: string;
  stop(): Promise<void>;
}

/** `git daemon` serving every repository under `root` as `git://127.0.0.1:<port>/<name>.git`. */
export async function startGitDaemon(root: string): Promise<GitServer> {
  const port = await freePort();
  const args = [
    'daemon',
    '--listen=127.0.0.1',
    `--port=${port}`,
    `--base-path=${root}`,
    '--export-all',
    '--reuseaddr',
    '--informative-errors',
    root,
  ];
  const child = spawn('git', args, { stdio: 'ignore' });
  await waitFor(() => tcpReachable(`git://127.0.0.1:${port}`, port, 200), 'git daemon');
  return { url: `git://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

/**
 * `git http-backend` (smart HTTP) as CGI behind a loopback https server with a certificate made for the test.
 * `/redirect/<path>` answers 301 to `/<path>` (to check that git is not allowed to follow it).
 */
export async function startGitHttps(root: string, base: string): Promise<GitServer> {
  const key = join(base, 'tls.key');
  const cert = join(base, 'tls.crt');
  const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    ...subject,
  ]);
  const server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (url.pathname.startsWith('/redirect/')) {
      res.writeHead(301, { location: url.pathname.slice('/redirect'.length) + url.search }).end();
      return;
    }
    const cgi = spawn(HTTP_BACKEND, [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method ?? 'GET',
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    pipeCgi(cgi, res);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `https://127.0.0.1:${port}`, caFile: cert, stop: () => closeServer(server) };
}

/**
 * An sshd on loopback serving git over ssh:// as this user, with a client key and a known_hosts file made for the test.
 */
export interface GitSshServer extends GitServer {
  readonly key: string;
  readonly knownHosts: string;
}

/** Whether an OpenSSH server is installed (apt-get install openssh-server). */
export const SSHD = '/usr/sbin/sshd';

export async function startGitSsh(base: string): Promise<GitSshServer> {
  const dir = join(base, 'ssh');
  await mkdir(dir, { recursive: true });
  await mkdir('/run/sshd', { recursive: true }).catch(() => undefined);
  for (const name of ['host_key', 'client_key'])
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, name)]);
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_key.pub')), { mode: 0o600 });
  const port = await freePort();
  const hostKey = (await readFile(join(dir, 'host_key.pub'), 'utf8')).split(' ').slice(0, 2).join(' ');
  await writeFile(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey}\n`);
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_key')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no',
    'PermitRootLogin prohibit-password',
    `PidFile ${join(dir, 'sshd.pid')}`,
  ];
  await writeFile(join(dir, 'sshd_config'), `${config.join('\n')}\n`);
  // -D: stays in the foreground, so stopping the child stops the server.
  const child = spawn(SSHD, ['-D', '-f', join(dir, 'sshd_config'), '-E', join(dir, 'sshd.log')], { stdio: 'ignore' });
  await waitFor(() => tcpReachable(`ssh://127.0.0.1:${port}`, port, 200), 'sshd');
  return {
    url: `ssh://${userInfo().username}@127.0.0.1:${port}`,
    key: join(dir, 'client_key'),
    knownHosts: join(dir, 'known_hosts'),
    stop: () => stopChild(child),
  };
}

/** CGI output: headers (with `Status:`) up to the blank line, then the body as it comes. */
function pipeCgi(cgi: ChildProcess, res: import('node:http').ServerResponse): void {
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout!.on('data', (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') : head.indexOf('\n\n');
    if (end < 0) return;
    const sep = head[end] === 0x0d ? 4 : 2;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    headersDone = true;
    res.write(head.subarray(end + sep));
  });
  cgi.stdout!.on('end', () => res.end());
  cgi.on('error', () => res.destroy());
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function exists(path: string): Promise<boolean> {
  return readFile(path).then(
    () => true,
    () => false,
  );
}

async function readdirSafe(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}
