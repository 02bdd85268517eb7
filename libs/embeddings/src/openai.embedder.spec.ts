import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode } from '#contracts';
import { OpenAiEmbedder } from './openai.embedder.js';

type Handler = (req: IncomingMessage, body: { model: string; input: string[] }, res: ServerResponse) => void;

/** A loopback server speaking the OpenAI embeddings wire format; each test scripts its answers. */
async function startServer(
  handler: Handler,
): Promise<{ url: string; server: Server; requests: { auth?: string; input: string[] }[] }> {
  const requests: { auth?: string; input: string[] }[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return void res.writeHead(404).end();
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ auth: req.headers.authorization, input: body.input });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

/** Embeds each text as [length, index-in-batch, 1], returned in reverse order to check reordering. */
function answer(res: ServerResponse, body: { model: string; input: string[] }): void {
  const data = body.input
    .map((t, index) => ({ object: 'embedding', index, embedding: [t.length, index, 1] }))
    .reverse();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
}

describe(OpenAiEmbedder.name, () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  describe('embed', () => {
    it('should send the key and model, batch the input and keep the order', async () => {
      const s = await startServer((_req, body, res) => answer(res, body));
      server = s.server;
      const embedder = await new OpenAiEmbedder({
        url: `${s.url}/v1/`,
        model: 'm-small',
        apiKey: 'sk-test',
        batchSize: 2,
      }).init();
      expect([embedder.id, embedder.kind, embedder.dimension]).toEqual(['openai:m-small', 'semantic', 3]);
      const out = await embedder.embed(['a', 'bb', 'ccc']);
      expect(out.map((v) => Array.from(v))).toEqual([
        [1, 0, 1],
        [2, 1, 1],
        [3, 0, 1],
      ]);
      expect(s.requests.map((r) => r.input)).toEqual([['dimension probe'], ['a', 'bb'], ['ccc']]);
      expect(s.requests.every((r) => r.auth === 'Bearer sk-test')).toBe(true);
    });

    it('should wait as retry-after says on 429, then succeed', async () => {
      let calls = 0;
      const s = await startServer((_req, body, res) => {
        if (calls++ === 0)
          return void res
            .writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' })
            .end('{"error":{"message":"slow down"}}');
        answer(res, body);
      });
      server = s.server;
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 3, backoffMs: 1 });
      const started = Date.now();
      const [v] = await embedder.embed(['hello']);
      expect(Array.from(v!)).toEqual([5, 0, 1]);
      expect(calls).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    });

    it('should retry 5xx a bounded number of times and then fail clearly', async () => {
      const s = await startServer((_req, _body, res) => void res.writeHead(503).end('overloaded'));
      server = s.server;
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 3, maxRetries: 2, backoffMs: 1 });
      await expect(embedder.embed(['x'])).rejects.toMatchObject({
        code: ErrorCode.ModelError,
        message: expect.stringContaining('HTTP 503 after 3 attempts'),
      });
      expect(s.requests).toHaveLength(3);
    });

    it('should not retry a 401 and say the key was rejected', async () => {
      const s = await startServer(
        (_req, _body, res) =>
          void res
            .writeHead(401, { 'content-type': 'application/json' })
            .end('{"error":{"message":"Incorrect API key provided"}}'),
      );
      server = s.server;
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 3, apiKey: 'bad' });
      const err = await embedder.embed(['x']).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: ErrorCode.ModelNotConfigured,
        message: expect.stringContaining('rejected the API key'),
      });
      expect((err as Error).message).toContain('Incorrect API key provided');
      expect(s.requests).toHaveLength(1);
    });

    it('should refuse vectors of the wrong dimension', async () => {
      const s = await startServer((_req, body, res) => answer(res, body));
      server = s.server;
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 1536 });
      await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: ErrorCode.ModelError });
    });

    it('should time out a hanging endpoint', async () => {
      const s = await startServer(() => undefined);
      server = s.server;
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 3, timeoutMs: 100 });
      await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: ErrorCode.ServiceTimeout });
      s.server.closeAllConnections();
    });

    it('should report an unreachable endpoint', async () => {
      const s = await startServer(() => undefined);
      await new Promise((resolve) => s.server.close(resolve));
      const embedder = new OpenAiEmbedder({ url: s.url, model: 'm', dimension: 3 });
      await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: ErrorCode.ServiceUnavailable });
    });
  });
});
