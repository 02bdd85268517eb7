import { createServer, type Server } from 'node:http';
import { HashingEmbedder } from '#embeddings';

/**
 * A loopback OpenAI-compatible embeddings endpoint (POST /v1/embeddings) serving the hashing embedder's
 * vectors, so Alfred and mem0 embed with the same model through the same wire protocol.
 */
export async function startEmbeddingsServer(
  dimension = 384,
): Promise<{ url: string; model: string; close(): Promise<void> }> {
  const embedder = new HashingEmbedder({ dimension });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string | string[]; model: string };
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      const data = inputs.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from(embedder.embedOne(text)),
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    model: embedder.id,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
