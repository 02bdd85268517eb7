import { createLogger } from '#logging';
import { createEmbedderFromConfig } from '#embeddings';
import { createVectorStoreFromConfig } from '#vector-store';
import { loadMemoryConfig } from './config.js';
import { Reindexer } from './reindexer.js';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `alfred reindex`: re-embeds every stored memory with the configured embedder (same environment as
 * the memory service). Run it after changing the embedder, while the memory service is stopped.
 */
export async function runReindexCommand(
  args: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (args.length > 0) {
    io.err(
      'usage: alfred reindex   (reads the memory service environment: ALFRED_DATA_DIR, ALFRED_EMBEDDER, ' +
        'QDRANT_URL, ...)',
    );
    return 2;
  }
  const config = loadMemoryConfig(env);
  const logger = createLogger({ service: 'reindex', level: 'warn' });
  const store = createVectorStoreFromConfig(config);
  try {
    const embedder = await createEmbedderFromConfig(config, logger);
    const result = await new Reindexer(store, embedder).reindex();
    io.out(`reindexed ${result.reindexed} memories with ${result.embedder} in ${result.duration_ms} ms`);
    return 0;
  } finally {
    await store.close();
  }
}
