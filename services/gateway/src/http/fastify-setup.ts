import { createHash, randomUUID } from 'node:crypto';
import { timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConsolePath } from './console-static.js';
import { checkScopedAccess } from './scoped-access.js';
import { ScopedCredentials } from './scoped-credential.js';

const OPEN_PATHS = new Set(['/health', '/health/live', '/health/ready', '/openapi.json']);
/** Paths that authenticate otherwise than by API key: Telegram's webhook carries the bot's webhook secret. */
const SELF_AUTHENTICATED = [/^\/channels\/telegram\/[^/]+\/webhook$/];
const CORRELATION_HEADER = 'x-correlation-id';

/**
 * Tenant resolution: open on loopback without keys; otherwise a valid key is required and picks the tenant. A scoped
 * credential (the agent's bash) is accepted in both modes, for its tenant, agent and session only.
 */
export function installAuth(
  app: FastifyInstance,
  keys: ReadonlyMap<string, string> | undefined,
  credentials: ScopedCredentials,
): void {
  const entries = [...(keys ?? new Map<string, string>()).entries()].map(([k, t]) => [Buffer.from(k), t] as const);
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const incoming = req.headers[CORRELATION_HEADER];
    const correlationId = typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    reply.header(CORRELATION_HEADER, correlationId);
    req.alfred = { tenant: 'default', correlationId };
    const presented = bearer(req) ?? header(req, 'x-api-key');
    if (presented !== undefined && ScopedCredentials.looksScoped(presented)) {
      const scope = await credentials.verify(presented);
      if (!scope)
        throw new AlfredError(
          ErrorCode.Unauthorized,
          'the scoped credential is not valid or has expired (it lasts one agent turn)',
        );
      checkScopedAccess(req.method, req.url, scope, header(req, 'x-alfred-session'));
      req.alfred.tenant = scope.tenant;
      req.alfred.scoped = scope;
      return;
    }
    const path = req.url.split('?')[0]!;
    if (
      entries.length === 0 ||
      OPEN_PATHS.has(path) ||
      isConsolePath(path) ||
      SELF_AUTHENTICATED.some((p) => p.test(path))
    )
      return;
    const tenant = presented === undefined ? undefined : matchKey(entries, presented);
    if (tenant === undefined) {
      throw new AlfredError(
        ErrorCode.Unauthorized,
        presented === undefined ? 'an API key is required (Authorization: Bearer <key>)' : 'the API key is not valid',
      );
    }
    req.alfred.tenant = tenant;
    req.alfred.keyName = keyName(presented!);
  });
}

/** A key's name in provenance records: a fingerprint, never the key (keys are configured without names). */
function keyName(key: string): string {
  return `key-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

function matchKey(entries: ReadonlyArray<readonly [Buffer, string]>, presented: string): string | undefined {
  const candidate = Buffer.from(presented);
  // Compare against every key in constant time so timing does not reveal which prefix matched.
  let tenant: string | undefined;
  for (const [key, t] of entries) {
    if (key.length === candidate.length && timingSafeEqual(key, candidate)) tenant = t;
  }
  return tenant;
}

function bearer(req: FastifyRequest): string | undefined {
  const auth = header(req, 'authorization');
  const match = auth?.match(/^Bearer\s+(.+)$/i);
  return match?.[1]?.trim();
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * A NUL character anywhere in a request (path, query or any string of the JSON body) is refused with 400 before any
 * route runs: ids and tags with NUL cannot be stored, listed or matched consistently by any store.
 */
export function refuseNul(app: FastifyInstance): void {
  app.addHook('preHandler', async (req) => {
    if (/%00/i.test(req.url) || req.url.includes('\0') || hasNul(req.body, 0)) {
      throw new AlfredError(ErrorCode.BadRequest, 'NUL characters are not allowed in paths, queries or bodies');
    }
  });
}

function hasNul(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (!value || typeof value !== 'object' || depth > 64) return false;
  for (const [key, inner] of Object.entries(value)) if (key.includes('\0') || hasNul(inner, depth + 1)) return true;
  return false;
}

/**
 * Only JSON bodies are accepted: fastify's text/plain parser is removed, so any other media type
 * is a 415 (Nest's own parsers are off: `bodyParser: false`).
 */
export function acceptOnlyJson(app: FastifyInstance): void {
  app.removeContentTypeParser(['text/plain']);
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ErrorCode.UnsupportedMediaType,
  FST_ERR_CTP_BODY_TOO_LARGE: ErrorCode.PayloadTooLarge,
  FST_ERR_CTP_INVALID_JSON_BODY: ErrorCode.InvalidJson,
  FST_ERR_CTP_EMPTY_JSON_BODY: ErrorCode.InvalidJson,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ErrorCode.BadRequest,
};

export function toAlfredError(err: unknown): AlfredError {
  if (err instanceof AlfredError) return err;
  const e = err as FastifyError & { type?: string };
  const mapped = e.code ? FASTIFY_CODES[e.code] : undefined;
  if (mapped) return new AlfredError(mapped, describeFastifyError(mapped, e));
  if (e instanceof SyntaxError || e.type === 'entity.parse.failed') {
    return new AlfredError(ErrorCode.InvalidJson, `malformed JSON body: ${e.message}`);
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AlfredError(ErrorCode.BadRequest, e.message);
  }
  return new AlfredError(ErrorCode.Internal, 'internal error', undefined, { cause: err });
}

function describeFastifyError(code: ErrorCode, e: FastifyError): string {
  switch (code) {
    case ErrorCode.UnsupportedMediaType:
      return 'unsupported media type: send application/json';
    case ErrorCode.PayloadTooLarge:
      return 'request body is too large';
    case ErrorCode.InvalidJson:
      return `malformed JSON body: ${e.message}`;
    default:
      return e.message;
  }
}
