import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { GitHostGuard } from './git-host.guard.js';
import { parseSource, sourceKey } from './git-source.js';

const open = { local: true, ssh: true };
const closed = { local: false, ssh: false };
const refusal = (source: string, policy = closed) => {
  try {
    parseSource(source, policy);
  } catch (err) {
    return err instanceof AlfredError
      ? { code: err.code, reason: (err.details as { reason: string }).reason, message: err.message }
      : String(err);
  }
  return 'accepted';
};

describe(parseSource.name, () => {
  it('should take https, git, GitHub shorthand and (when configured) ssh, file and absolute paths', () => {
    expect(parseSource('https://github.com/acme/skills.git/', closed)).toMatchObject({
      scheme: 'https',
      source: 'https://github.com/acme/skills.git',
      host: 'github.com',
      port: 443,
      name: 'skills',
    });
    expect(parseSource('git://Example.org:9419/skills', closed)).toMatchObject({
      scheme: 'git',
      host: 'example.org',
      port: 9419,
      name: 'skills',
    });
    expect(parseSource('acme/skills', closed)).toMatchObject({
      scheme: 'https',
      source: 'https://github.com/acme/skills',
      url: 'https://github.com/acme/skills',
    });
    expect(parseSource('git@github.com:acme/skills.git', open)).toMatchObject({
      scheme: 'ssh',
      url: 'ssh://git@github.com/acme/skills.git',
      host: 'github.com',
      port: 22,
    });
    expect(parseSource('/srv/repos/skills.git', open)).toMatchObject({
      scheme: 'file',
      url: 'file:///srv/repos/skills.git',
      name: 'skills',
    });
    expect(parseSource('file:///srv/repos/skills.git', open)).toMatchObject({ scheme: 'file', name: 'skills' });
  });

  it('should refuse everything else with a clear 400 that says why', () => {
    expect(refusal('http://example.org/skills.git')).toMatchObject({
      code: ErrorCode.BadRequest,
      reason: 'source_refused',
      message: expect.stringMatching(/https/),
    });
    expect(refusal('ftp://example.org/skills')).toMatchObject({
      reason: 'source_refused',
      message: expect.stringMatching(/^ftp: sources are refused/),
    });
    expect(refusal('ext::sh -c touch% /tmp/pwned')).toMatchObject({ reason: 'source_refused' });
    expect(refusal('ssh://git@example.org/skills.git')).toMatchObject({
      message: expect.stringMatching(/ALFRED_SKILLS_INSTALL_SSH_KEY/),
    });
    expect(refusal('git@example.org:skills.git')).toMatchObject({ message: expect.stringMatching(/ssh/) });
    expect(refusal('file:///etc')).toMatchObject({ message: expect.stringMatching(/ALFRED_SKILLS_INSTALL_LOCAL/) });
    expect(refusal('/etc')).toMatchObject({ message: expect.stringMatching(/local sources/) });
    expect(refusal('https://user:token@example.org/skills.git')).toMatchObject({
      message: expect.stringMatching(/credentials in the URL/),
    });
    expect(refusal('--upload-pack=touch /tmp/x')).toMatchObject({ reason: 'source_refused' });
    expect(refusal('https://example.org/a?b=c')).toMatchObject({ message: expect.stringMatching(/query/) });
    expect(refusal('relative/path/to/repo')).toMatchObject({ reason: 'source_refused' });
  });
});

describe(sourceKey.name, () => {
  it('should fold only what git treats alike: scheme and host case, trailing slash or .git, GitHub shorthand', () => {
    expect(sourceKey('HTTPS://GitHub.com/acme/Skills.git/')).toBe(sourceKey('https://github.com/acme/Skills'));
    expect(sourceKey('acme/skills')).toBe(sourceKey('https://github.com/acme/skills.git'));
    expect(sourceKey('https://github.com/acme/Skills')).not.toBe(sourceKey('https://github.com/acme/skills'));
  });
});

describe(GitHostGuard.name, () => {
  const resolving = (answers: Record<string, string[]>) => async (host: string) => answers[host] ?? [];
  const decision = async (guard: GitHostGuard, source: string) => {
    try {
      return await guard.pin(parseSource(source, closed));
    } catch (err) {
      return err instanceof AlfredError
        ? { code: err.code, reason: (err.details as { reason: string }).reason }
        : String(err);
    }
  };

  it('should refuse hosts resolving to private, loopback, link-local or metadata IPs without connecting', async () => {
    const guard = new GitHostGuard(
      [],
      resolving({ 'internal.example': ['10.1.2.3'], 'mixed.example': ['93.184.216.34', '169.254.169.254'] }),
    );
    for (const source of [
      'https://internal.example/a.git',
      'https://mixed.example/a.git',
      'git://127.0.0.1/a.git',
      'git://[::1]/a.git',
      'https://169.254.169.254/a.git',
    ]) {
      expect({ source, decision: await decision(guard, source) }).toEqual({
        source,
        decision: { code: ErrorCode.Forbidden, reason: 'host_refused' },
      });
    }
    expect(await decision(guard, 'https://nowhere.example/a.git')).toEqual({
      code: ErrorCode.ServiceUnavailable,
      reason: 'unreachable',
    });
  });

  it('should hold git to the checked address: curl resolve for https, the address itself for git://', async () => {
    const guard = new GitHostGuard(
      ['git.internal'],
      resolving({ 'github.com': ['140.82.121.4'], 'git.internal': ['10.0.0.7'] }),
    );
    expect(await decision(guard, 'https://github.com/acme/skills')).toEqual({
      url: 'https://github.com/acme/skills',
      config: ['http.curloptResolve=github.com:443:140.82.121.4'],
    });
    expect(await decision(guard, 'git://git.internal/skills.git')).toEqual({
      url: 'git://10.0.0.7/skills.git',
      config: [],
    });
    const ssh = async (source: string) => guard.pin(parseSource(source, open));
    expect(await ssh('git@github.com:acme/skills.git')).toEqual({
      url: 'ssh://git@140.82.121.4/acme/skills.git',
      config: [],
      sshHostAlias: 'github.com',
    });
    expect(await ssh('ssh://git@github.com:2222/acme/skills.git')).toMatchObject({ sshHostAlias: '[github.com]:2222' });
  });
});
