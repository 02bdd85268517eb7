import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { deniedAddressReason } from '#sandbox';
import type { GitRemote } from './git-source.js';

/** Every address a host name resolves to. */
export type AddressResolver = (host: string) => Promise<string[]>;

const systemResolver: AddressResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** A remote git may fetch, held to the addresses that were checked. */
export interface PinnedRemote {
  /** The URL git is given (git:// and ssh:// name the checked address itself). */
  readonly url: string;
  /** `-c` settings that hold git to the checked address (https: curl's resolve list). */
  readonly config: readonly string[];
  /** ssh checks the host key under the host's name, not the address it connects to. */
  readonly sshHostAlias?: string;
}

/**
 * The host guard of installs: a source's host must resolve to public addresses only — never loopback, private,
 * link-local or the cloud metadata address (the same ranges the skills' fetch guard refuses) — unless the operator
 * listed it in ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS. Git is then held to the address that was checked, so a second
 * DNS answer cannot send it elsewhere; redirects are not followed (see GitClient).
 */
export class GitHostGuard {
  constructor(
    private readonly privateHosts: readonly string[],
    private readonly resolve: AddressResolver = systemResolver,
  ) {}

  async pin(remote: GitRemote): Promise<PinnedRemote> {
    if (remote.scheme === 'file' || !remote.host) return { url: remote.url, config: [] };
    const host = remote.host;
    const addresses = isIP(host) ? [host] : await this.addressesOf(host, remote.source);
    const allowed = this.privateHosts.includes(host);
    for (const address of addresses) {
      const denied = allowed ? undefined : deniedAddressReason(address);
      if (denied) {
        throw new AlfredError(
          ErrorCode.Forbidden,
          `${host} resolves to ${denied} (${address}); installs reach public hosts only unless ` +
            `ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS lists it`,
          { source: remote.source, host, address, reason: 'host_refused' },
        );
      }
    }
    const address = addresses[0]!;
    const literal = address.includes(':') ? `[${address}]` : address;
    if (remote.scheme === 'https')
      return { url: remote.url, config: [`http.curloptResolve=${hostPort(host, remote.port)}:${literal}`] };
    const url = new URL(remote.url);
    url.hostname = literal;
    // known_hosts names a host on another port as [host]:port; ssh looks the alias up as it is.
    const alias = remote.port === 22 || remote.port === undefined ? host : `[${host}]:${remote.port}`;
    return { url: url.href, config: [], ...(remote.scheme === 'ssh' ? { sshHostAlias: alias } : {}) };
  }

  private async addressesOf(host: string, source: string): Promise<string[]> {
    try {
      const found = await this.resolve(host);
      if (found.length > 0) return found;
    } catch {
      // Reported below, the same as an empty answer.
    }
    throw new AlfredError(ErrorCode.ServiceUnavailable, `the host ${host} could not be resolved`, {
      source,
      host,
      reason: 'unreachable',
    });
  }
}

function hostPort(host: string, port: number | undefined): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port ?? 443}`;
}
