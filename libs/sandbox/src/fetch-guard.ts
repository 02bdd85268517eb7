import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { deniedAddressReason } from './address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it may connect to. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** A host the guard approved, with the exact addresses that were checked. */
export interface VettedTarget {
  url: URL;
  hostname: string;
  port: number;
  addresses: ResolvedAddress[];
}

/** Opens connections for one vetted hop; it must connect only to `target.addresses`. */
export type DispatcherFactory = (target: VettedTarget) => Dispatcher;

export type FetchDecision = ({ allowed: true } & VettedTarget) | { allowed: false; reason: string };

export interface GuardedRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
}

export interface GuardedResponse {
  url: string;
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

export interface FetchGuardOptions {
  resolver?: HostResolver;
  /** Tests only: how a vetted hop connects. Production pins the connection to the vetted addresses. */
  dispatcherFactory?: DispatcherFactory;
  maxRedirects?: number;
  maxResponseBytes?: number;
  maxRequestBytes?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DROPPED_REQUEST_HEADERS = [
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'te',
  'trailer',
];
const CREDENTIAL_HEADERS = ['authorization', 'cookie'];

/**
 * Outbound HTTP for skills: host allowlist, no private/loopback/link-local/metadata addresses, re-checked on every hop.
 */
export class FetchGuard {
  private readonly resolver: HostResolver;
  private readonly dispatcherFactory: DispatcherFactory;
  private readonly maxRedirects: number;
  private readonly maxResponseBytes: number;
  private readonly maxRequestBytes: number;

  constructor(options: FetchGuardOptions = {}) {
    this.resolver = options.resolver ?? systemResolver;
    this.dispatcherFactory = options.dispatcherFactory ?? pinnedDispatcher;
    this.maxRedirects = options.maxRedirects ?? 5;
    this.maxResponseBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;
    this.maxRequestBytes = options.maxRequestBytes ?? 5 * 1024 * 1024;
  }

  /** Whether a skill with these allowed hosts may fetch `rawUrl`, and through which addresses. */
  async decide(rawUrl: string, allowedHosts: readonly string[]): Promise<FetchDecision> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return deny(`invalid URL: ${rawUrl.slice(0, 200)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return deny(`only http and https URLs are allowed, not ${url.protocol}`);
    if (url.username || url.password) return deny('credentials in URLs are not allowed');
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if (!allowedHosts.some((pattern) => hostMatches(pattern, hostname, port, url.protocol))) {
      return deny(`host ${url.host} is not in the skill's allowed hosts`);
    }
    const addresses = await this.resolve(hostname);
    if (typeof addresses === 'string') return deny(addresses);
    for (const { address } of addresses) {
      const reason = deniedAddressReason(address);
      if (reason)
        return deny(isIP(hostname) ? `${url.host} is ${reason}` : `${url.host} resolves to ${address}, ${reason}`);
    }
    return { allowed: true, url, hostname, port, addresses };
  }

  /** Performs a request, following up to maxRedirects redirects manually and re-deciding every hop. */
  async fetch(
    request: GuardedRequest,
    allowedHosts: readonly string[],
    signal?: AbortSignal,
  ): Promise<GuardedResponse> {
    let method = (request.method ?? 'GET').toUpperCase();
    let body = request.body;
    let headers = cleanHeaders(request.headers ?? {});
    if (body && body.byteLength > this.maxRequestBytes)
      throw denied(`request body exceeds ${this.maxRequestBytes} bytes`);
    let url = request.url;
    for (let hop = 0; ; hop++) {
      const decision = await this.decide(url, allowedHosts);
      if (!decision.allowed) throw denied(hop === 0 ? decision.reason : `redirect refused: ${decision.reason}`);
      const response = await this.send(decision, { method, headers, body }, signal);
      const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return await this.collect(decision.url, response);
      await response.body?.cancel();
      if (hop >= this.maxRedirects) throw denied(`too many redirects (more than ${this.maxRedirects})`);
      const next = new URL(location, decision.url);
      if (next.origin !== decision.url.origin) headers = withoutHeaders(headers, CREDENTIAL_HEADERS);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers = withoutHeaders(headers, ['content-type', 'content-length']);
      }
      url = next.href;
    }
  }

  private async resolve(hostname: string): Promise<ResolvedAddress[] | string> {
    const family = isIP(hostname);
    if (family === 4 || family === 6) return [{ address: hostname, family }];
    try {
      const addresses = await this.resolver(hostname);
      return addresses.length > 0 ? addresses : `${hostname} did not resolve to any address`;
    } catch (err) {
      return `${hostname} could not be resolved: ${(err as Error).message}`;
    }
  }

  private async send(
    target: VettedTarget,
    init: { method: string; headers: Record<string, string>; body?: Uint8Array },
    signal?: AbortSignal,
  ) {
    const dispatcher = this.dispatcherFactory(target);
    try {
      const response = await undiciFetch(target.url, { ...init, redirect: 'manual', dispatcher, signal });
      // The dispatcher must outlive the body read; close it once the body is done.
      return Object.assign(response, { closeDispatcher: () => dispatcher.close() });
    } catch (err) {
      await dispatcher.close().catch(() => undefined);
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        `fetch ${target.url.host} failed: ${describeCause(err)}`,
        undefined,
        { cause: err },
      );
    }
  }

  private async collect(url: URL, response: Awaited<ReturnType<FetchGuard['send']>>): Promise<GuardedResponse> {
    try {
      const chunks: Uint8Array[] = [];
      let total = 0;
      for await (const chunk of response.body ?? []) {
        total += chunk.byteLength;
        if (total > this.maxResponseBytes)
          throw new AlfredError(ErrorCode.PayloadTooLarge, `response body exceeds ${this.maxResponseBytes} bytes`);
        chunks.push(chunk);
      }
      return {
        url: url.href,
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers],
        body: Buffer.concat(chunks),
      };
    } finally {
      await response.closeDispatcher().catch(() => undefined);
    }
  }
}

/**
 * Matches `host`, `host:port` and `*.domain` (any subdomain, not the apex); without a port only the scheme's default
 * port.
 */
export function hostMatches(pattern: string, hostname: string, port: number, protocol: string): boolean {
  const [patternHost, patternPort] = splitHostPort(pattern.toLowerCase());
  const defaultPort = protocol === 'https:' ? 443 : 80;
  if ((patternPort ?? defaultPort) !== port) return false;
  const host = hostname.toLowerCase();
  if (patternHost.startsWith('*.')) return host.endsWith(patternHost.slice(1)) && host.length > patternHost.length - 1;
  return host === patternHost;
}

function splitHostPort(pattern: string): [string, number | undefined] {
  const match = /^(.*):(\d{1,5})$/.exec(pattern);
  return match ? [match[1]!, Number(match[2])] : [pattern, undefined];
}

async function systemResolver(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/**
 * Connects only to the vetted addresses; TLS still verifies the certificate for the URL's host name (SNI unchanged).
 */
export function pinnedDispatcher(target: VettedTarget): Dispatcher {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const [first] = target.addresses;
    if (options.all) (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, target.addresses);
    else callback(null, first!.address, first!.family);
  };
  return new Agent({ connect: { lookup }, connections: 1, pipelining: 0 });
}

function deny(reason: string): FetchDecision {
  return { allowed: false, reason };
}

function denied(reason: string): AlfredError {
  return new AlfredError(ErrorCode.Forbidden, `fetch refused: ${reason}`);
}

function cleanHeaders(headers: Record<string, string>): Record<string, string> {
  return withoutHeaders(
    Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)])),
    DROPPED_REQUEST_HEADERS,
  );
}

function withoutHeaders(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
