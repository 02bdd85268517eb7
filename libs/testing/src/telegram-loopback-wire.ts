import type { IncomingMessage, ServerResponse } from 'node:http';

/** The Bot API's error answer: `{ok:false, error_code, description, parameters?}` with the same HTTP status. */
export interface BotApiError {
  readonly error_code: number;
  readonly description: string;
  readonly retry_after?: number;
}

export class BotApiFailure extends Error {
  constructor(readonly answer: BotApiError) {
    super(answer.description);
  }
}

export const badRequest = (what: string) => new BotApiFailure({ error_code: 400, description: `Bad Request: ${what}` });

export function sendAnswer(res: ServerResponse, result: unknown): void {
  send(res, 200, { ok: true, result });
}

export function sendError(res: ServerResponse, e: BotApiError): void {
  const body = {
    ok: false,
    error_code: e.error_code,
    description: e.description,
    ...(e.retry_after === undefined ? {} : { parameters: { retry_after: e.retry_after } }),
  };
  send(res, e.error_code, body);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A form field as the Bot API reads it: objects and arrays arrive JSON-serialised. */
function fieldValue(raw: string): unknown {
  const t = raw.trim();
  if (/^[[{]/.test(t) || /^-?\d+$/.test(t) || t === 'true' || t === 'false') {
    try {
      return JSON.parse(t);
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * The parameters of a Bot API call, from wherever Telegram accepts them: the query string, a JSON body,
 * an urlencoded form or a multipart form (how grammY sends files).
 */
export async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = {};
  for (const [k, v] of url.searchParams) params[k] = fieldValue(v);
  const body = await readBody(req);
  if (body.length === 0) return params;
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/json')) {
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw badRequest("can't parse JSON object");
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw badRequest('parameters must be a JSON object');
    return { ...params, ...(json as Record<string, unknown>) };
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params[k] = fieldValue(v);
    return params;
  }
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData();
    for (const [k, v] of form) params[k] = typeof v === 'string' ? fieldValue(v) : { file: v.name, size: v.size };
    return params;
  }
  throw badRequest('unsupported content type');
}

const ENTITY_TYPES = new Set([
  'mention',
  'hashtag',
  'cashtag',
  'bot_command',
  'url',
  'email',
  'phone_number',
  'bold',
  'italic',
  'underline',
  'strikethrough',
  'spoiler',
  'blockquote',
  'expandable_blockquote',
  'code',
  'pre',
  'text_link',
  'text_mention',
  'custom_emoji',
]);

/** Checks a message text and its entities as Telegram does: 1-4096 UTF-16 units, entities inside the text. */
export function checkText(text: unknown, entities: unknown, limit = 4096): { text: string; entities?: unknown[] } {
  if (typeof text !== 'string' || text.trim().length === 0) throw badRequest('message text is empty');
  if (text.length > limit) throw badRequest('message is too long');
  if (entities === undefined) return { text };
  if (!Array.isArray(entities)) throw badRequest("can't parse entities: entities must be an array");
  for (const e of entities as Array<Record<string, unknown>>) {
    const { type, offset, length } = e;
    if (typeof type !== 'string' || !ENTITY_TYPES.has(type))
      throw badRequest(`can't parse entities: unsupported entity type ${String(type)}`);
    if (
      typeof offset !== 'number' ||
      typeof length !== 'number' ||
      offset < 0 ||
      length <= 0 ||
      offset + length > text.length
    ) {
      throw badRequest(
        `can't parse entities: entity ${type} at ${String(offset)}+${String(length)} is outside the text of ` +
          `length ${text.length}`,
      );
    }
    if (type === 'text_link' && typeof e.url !== 'string')
      throw badRequest("can't parse entities: text_link needs a url");
  }
  return { text, entities };
}

/** Inline keyboards: callback_data is 1-64 bytes. */
export function checkMarkup(markup: unknown): unknown {
  if (markup === undefined) return undefined;
  const rows = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (!Array.isArray(rows)) throw badRequest('reply markup must have an inline_keyboard');
  for (const row of rows as unknown[][]) {
    for (const button of row as Array<{ text?: unknown; callback_data?: unknown }>) {
      if (typeof button.text !== 'string' || button.text.length === 0) throw badRequest('button text is empty');
      const data = button.callback_data;
      if (
        data !== undefined &&
        (typeof data !== 'string' || Buffer.byteLength(data) === 0 || Buffer.byteLength(data) > 64)
      )
        throw badRequest('BUTTON_DATA_INVALID');
    }
  }
  return markup;
}
