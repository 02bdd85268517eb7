import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { isAlfredError } from '#errors';
import { existsSync } from 'node:fs';
import {
  describeWithGit,
  GitFixtures,
  SSHD,
  startGitDaemon,
  startGitHttps,
  startGitSsh,
  type GitServer,
} from '#testing';
import { GitClient } from './git.client.js';
import { GitHostGuard } from './git-host.guard.js';
import { parseSource } from './git-source.js';

const policy = { local: true, ssh: false };

describeWithGit(GitClient.name, () => {
  let fixtures: GitFixtures;
  let daemon: GitServer;
  let https: GitServer;
  let first: string;
  let second: string;
  const client = (over: Partial<ConstructorParameters<typeof GitClient>[0]> = {}) =>
    new GitClient({
      binary: 'git',
      workDir: join(fixtures.base, 'work-client'),
      timeoutMs: 30_000,
      maxBytes: 10 * 1024 * 1024,
      caFile: https.caFile,
      ...over,
    });
  const guard = new GitHostGuard(['127.0.0.1']);
  const fetch = async (source: string, ref?: string, c = client()) => {
    const remote = parseSource(source, policy);
    return c.fetch(remote, await guard.pin(remote), ref);
  };
  const failure = async (work: Promise<unknown>) => {
    try {
      await work;
    } catch (err) {
      return isAlfredError(err)
        ? { code: err.code, reason: (err.details as { reason?: string }).reason, message: err.message }
        : { code: String(err) };
    }
    throw new Error('expected a failure');
  };

  beforeAll(async () => {
    fixtures = await GitFixtures.create();
    first = await fixtures.commit('collection', { 'skills/a/SKILL.md': 'one\n', link: { link: '../outside' } });
    second = await fixtures.commit('collection', {
      'skills/a/SKILL.md': 'two\n',
      'skills/b/big.bin': randomBytes(300_000),
    });
    await fixtures.tag('collection', 'v1', first);
    daemon = await startGitDaemon(fixtures.root);
    https = await startGitHttps(fixtures.root, fixtures.base);
  });
  afterAll(async () => {
    await daemon?.stop();
    await https?.stop();
    await fixtures?.remove();
  });

  it('should fetch the default branch over git://, smart https and file://: same commit and tree', async () => {
    for (const source of [
      `${daemon.url}/collection.git`,
      `${https.url}/collection.git`,
      `file://${fixtures.root}/collection.git`,
    ]) {
      const repo = await fetch(source);
      try {
        expect({ source, ref: repo.ref, commit: repo.commit }).toEqual({ source, ref: 'main', commit: second });
        const tree = await repo.tree();
        expect(tree.map((e) => [e.path, e.size])).toEqual([
          ['skills/a/SKILL.md', 4],
          ['skills/b/big.bin', 300_000],
        ]);
        const blobs = await repo.blobs([tree[0]!.oid]);
        expect(blobs.get(tree[0]!.oid)?.toString('utf8')).toBe('two\n');
      } finally {
        await repo.dispose();
      }
    }
  });

  it('should fetch a tag and a full commit id, and report a symlink with its target as a blob', async () => {
    const byTag = await fetch(`${daemon.url}/collection.git`, 'v1');
    const byCommit = await fetch(`${https.url}/collection.git`, first);
    try {
      expect([byTag.commit, byTag.ref, byCommit.commit, byCommit.ref]).toEqual([first, 'v1', first, first]);
      const link = (await byTag.tree()).find((e) => e.path === 'link')!;
      expect(link.mode).toBe('120000');
      expect((await byTag.blobs([link.oid])).get(link.oid)?.toString()).toBe('../outside');
    } finally {
      await byTag.dispose();
      await byCommit.dispose();
    }
  });

  it('should answer a missing repository or ref with 404, a redirect with 400, a private host with 403', async () => {
    expect(await failure(fetch(`${daemon.url}/nothing.git`))).toMatchObject({ code: ErrorCode.NotFound });
    expect(await failure(fetch(`${https.url}/nothing.git`))).toMatchObject({ code: ErrorCode.NotFound });
    expect(await failure(fetch(`${daemon.url}/collection.git`, 'no-such-branch'))).toMatchObject({
      code: ErrorCode.NotFound,
      reason: 'not_found',
    });
    expect(await failure(fetch(`${https.url}/redirect/collection.git`))).toMatchObject({
      code: ErrorCode.BadRequest,
      reason: 'redirected',
    });
    const strict = new GitHostGuard([]);
    expect(await failure(strict.pin(parseSource(`${daemon.url}/collection.git`, policy)))).toMatchObject({
      code: ErrorCode.Forbidden,
      reason: 'host_refused',
    });
  });

  const sshIt = existsSync(SSHD) || process.env.CI === 'true' ? it : it.skip;
  if (!existsSync(SSHD) && process.env.CI !== 'true')
    console.warn(`[skip] git over ssh: no ${SSHD} (apt-get install openssh-server)`);
  sshIt(
    'should fetch over ssh:// with the configured key, checking the host key, and refuse an unknown host',
    async () => {
      const ssh = await startGitSsh(fixtures.base);
      try {
        const source = `${ssh.url}${fixtures.root}/collection.git`;
        const sshPolicy = { local: false, ssh: true };
        const remote = parseSource(source, sshPolicy);
        const repo = await client({ ssh: { key: ssh.key, knownHosts: ssh.knownHosts } }).fetch(
          remote,
          await guard.pin(remote),
          undefined,
        );
        expect(repo.commit).toBe(second);
        await repo.dispose();
        const stranger = client({ ssh: { key: ssh.key, knownHosts: '/dev/null' } }).fetch(
          remote,
          await guard.pin(remote),
          undefined,
        );
        expect(await failure(stranger)).toMatchObject({ code: ErrorCode.Forbidden, reason: 'access_refused' });
      } finally {
        await ssh.stop();
      }
    },
  );

  it('should stop a fetch that outgrows the size limit (413) or the time limit (504)', async () => {
    expect(await failure(fetch(`${daemon.url}/collection.git`, undefined, client({ maxBytes: 20_000 })))).toMatchObject(
      { code: ErrorCode.PayloadTooLarge, reason: 'too_large' },
    );
    expect(await failure(fetch(`${daemon.url}/collection.git`, undefined, client({ timeoutMs: 1 })))).toMatchObject({
      code: ErrorCode.ServiceTimeout,
      reason: 'timeout',
    });
  });
});
