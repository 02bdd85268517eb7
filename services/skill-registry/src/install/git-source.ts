import { isAbsolute, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

export type GitScheme = 'https' | 'git' | 'ssh' | 'file';

/** A source the registry may fetch: what is stored and shown, and what git is given. */
export interface GitRemote {
  readonly scheme: GitScheme;
  /** The source as stored and shown: the given text, trimmed, without a trailing slash (shorthands expanded). */
  readonly source: string;
  /** The URL git fetches (for hosts, the vetting step may pin it to an address). */
  readonly url: string;
  readonly host?: string;
  readonly port?: number;
  /** The repository's own name (last path segment without `.git`): the name of a skill at its root. */
  readonly name: string;
}

/** Which sources this registry accepts beyond `https://` and `git://`. */
export interface SourcePolicy {
  readonly local: boolean;
  readonly ssh: boolean;
}

const DEFAULT_PORT: Record<string, number> = { https: 443, git: 9418, ssh: 22 };
/** `owner/repo`: GitHub's shorthand, as people share skill collections. */
const GITHUB_SHORTHAND = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
/** `user@host:path`: git's scp-like ssh syntax. */
const SCP_LIKE = /^(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;

const refuse = (source: string, message: string) =>
  new AlfredError(ErrorCode.BadRequest, message, { source, reason: 'source_refused' });

/**
 * Reads a source and applies the policy: `https://` and `git://` always; `ssh://` (or `user@host:path`) when a key is
 * configured; `file://` and absolute local paths only when local installs are allowed. Anything else is refused
 * (plain `http://` included: code fetched in the clear could be changed on the way).
 */
export function parseSource(raw: string, policy: SourcePolicy): GitRemote {
  const given = raw.trim().replace(/(?<=.)\/+$/, '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: it refuses control characters
  if (/[\u0000-\u001f\u007f\s]/.test(given)) throw refuse(given, 'a source holds no spaces or control characters');
  if (given.startsWith('-')) throw refuse(given, 'a source cannot start with "-"');
  if (GITHUB_SHORTHAND.test(given) && !given.startsWith('.'))
    return fromUrl(`https://github.com/${given}`, `https://github.com/${given}`, policy);
  if (isAbsolute(given)) return local(given, pathToFileURL(normalize(given)).href, policy);
  const scp = !/^[a-z][a-z0-9+.-]*:\/\//i.test(given) ? SCP_LIKE.exec(given) : null;
  if (scp) return fromUrl(`ssh://${scp[1] ? `${scp[1]}@` : ''}${scp[2]}/${scp[3]!.replace(/^\/+/, '')}`, given, policy);
  return fromUrl(given, given, policy);
}

function fromUrl(text: string, source: string, policy: SourcePolicy): GitRemote {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse(
      source,
      `"${source.slice(0, 200)}" is not a git URL: use https://, git://, ssh:// (when configured) or owner/repo`,
    );
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'file') return local(source, url.href, policy);
  if (scheme === 'http')
    throw refuse(
      source,
      'plain http:// is refused (code fetched in the clear can be changed on the way); use https://',
    );
  if (scheme !== 'https' && scheme !== 'git' && scheme !== 'ssh') {
    throw refuse(
      source,
      `${scheme}: sources are refused; use https://, git://, ssh:// (when configured) or owner/repo`,
    );
  }
  if (scheme === 'ssh' && !policy.ssh)
    throw refuse(source, 'ssh sources are off: the registry has no ssh key (ALFRED_SKILLS_INSTALL_SSH_KEY)');
  if (scheme !== 'ssh' && (url.username || url.password)) {
    throw refuse(
      source,
      'credentials in the URL are refused (they would be stored and shown); use a public URL or ssh:// with ' +
        'the configured key',
    );
  }
  if (url.search || url.hash) throw refuse(source, 'a git URL has no query or fragment');
  if (!url.hostname) throw refuse(source, 'a git URL names its host');
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return {
    scheme,
    source,
    url: url.href.replace(/\/+$/, ''),
    host,
    port: url.port ? Number(url.port) : DEFAULT_PORT[scheme]!,
    name: repoName(url.pathname),
  };
}

function local(source: string, href: string, policy: SourcePolicy): GitRemote {
  if (!policy.local)
    throw refuse(
      source,
      'local sources (file:// and paths) are off on this registry (ALFRED_SKILLS_INSTALL_LOCAL=true turns them on)',
    );
  const url = new URL(href);
  if (url.host !== '') throw refuse(source, 'a file:// URL names no host');
  return {
    scheme: 'file',
    source,
    url: url.href.replace(/\/+$/, ''),
    name: repoName(decodeURIComponent(url.pathname)),
  };
}

function repoName(pathname: string): string {
  const last = pathname.replace(/\/+$/, '').split('/').pop() ?? '';
  return last.replace(/\.git$/, '');
}

/**
 * What two sources are compared by (filters, updates of a source): scheme and host in lower case, without a trailing
 * slash or `.git` — `https://github.com/a/b.git` and `https://github.com/A/b/` are one source only if git says so, so
 * only case-insensitive parts are folded.
 */
export function sourceKey(source: string): string {
  const trimmed = source
    .trim()
    .replace(/(?<=.)\/+$/, '')
    .replace(/\.git$/, '');
  if (GITHUB_SHORTHAND.test(trimmed) && !trimmed.startsWith('.')) return `https://github.com/${trimmed}`;
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)(.*)$/i.exec(trimmed);
  return m ? `${m[1]!.toLowerCase()}://${m[2]!.toLowerCase()}${m[3]}` : trimmed;
}
