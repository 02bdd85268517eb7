import { connection } from './connection';

/** The console's only backend is the Alfred HTTP API on the same origin, called with the key the user typed. */

const KEY = 'alfred.console.key';
const AGENT = 'alfred.console.agent';

/** The key lives in this tab's sessionStorage only: never in the page, a cookie, localStorage or a URL. */
export const session = {
  /** Set by the sign-in form so the first screen takes focus (a reload of a signed-in tab does not). */
  justSignedIn: false,
  key: (): string => sessionStorage.getItem(KEY) ?? '',
  agent: (): string => sessionStorage.getItem(AGENT) ?? 'alfred',
  signedIn: (): boolean => sessionStorage.getItem(KEY) !== null,
  signIn(key: string, agent: string): void {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(AGENT, agent);
  },
  setAgent: (agent: string): void => sessionStorage.setItem(AGENT, agent),
  signOut(): void {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(AGENT);
  },
};

/** An answer in the API's error format (`{error: {code, message, details}}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/**
 * No answer at all: the server is down, restarting, or the network is away (the browser says only "Failed to fetch").
 */
export class UnreachableError extends Error {
  constructor() {
    super(`The Alfred server at ${location.host} cannot be reached.`);
    this.name = 'UnreachableError';
  }
}

/**
 * fetch that tells the connection monitor whether the server answered; a request that got no answer is
 * UnreachableError.
 */
export async function send(path: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    connection.lost();
    throw new UnreachableError();
  }
  connection.answered();
  return res;
}

export function headers(
  extra: Record<string, string> = {},
  key = session.key(),
  agent = session.agent(),
): Record<string, string> {
  const h: Record<string, string> = { 'x-alfred-agent': agent, ...extra };
  if (key) h.authorization = `Bearer ${key}`;
  return h;
}

/** A JSON call; throws ApiError with the API's own message on any 4xx/5xx. */
export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: string; agent?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const init: RequestInit = {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }, opts.key, opts.agent),
    signal: opts.signal,
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await send(path, init);
  const text = await res.text();
  const json = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const err = (json as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    throw new ApiError(
      res.status,
      err?.code ?? 'HTTP_ERROR',
      err?.message ?? `${res.status} ${res.statusText}`,
      err?.details,
    );
  }
  return json as T;
}

/** A plain-text call (the Prometheus exposition at /metrics). */
export async function apiText(path: string): Promise<string> {
  const res = await send(path, { headers: headers() });
  if (!res.ok) throw new ApiError(res.status, 'HTTP_ERROR', `${path}: ${res.status}`);
  return res.text();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Builds a query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;
