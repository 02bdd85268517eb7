import { DEFAULT_MODEL, modelDirOf, pullModel } from '#embeddings';
import { loadMemoryConfig } from './config.js';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `alfred models pull`: fetches the default sentence-embedding model into the data dir (or
 * ALFRED_EMBEDDINGS_MODEL_DIR), where `ALFRED_EMBEDDER=auto` finds it on the next start. Loading stays
 * offline; only this command talks to the hub. Existing memories then need `alfred reindex`.
 */
export async function runModelsCommand(
  args: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (args[0] !== 'pull' || args.length > 1) {
    io.err('usage: alfred models pull   (ALFRED_MODEL_HUB_URL, ALFRED_DATA_DIR / ALFRED_EMBEDDINGS_MODEL_DIR)');
    return 2;
  }
  const config = loadMemoryConfig(env);
  const destDir = modelDirOf(config);
  io.out(`pulling ${DEFAULT_MODEL.repo} from ${config.ALFRED_MODEL_HUB_URL} into ${destDir} ...`);
  try {
    const pulled = await pullModel({
      hubUrl: config.ALFRED_MODEL_HUB_URL,
      repo: DEFAULT_MODEL.repo,
      files: DEFAULT_MODEL.files,
      destDir,
    });
    io.out(
      `ready: ${pulled.dir} (${pulled.dimension} dims, ${Math.round(pulled.bytes / 1e6)} MB). Restart ` +
        `Alfred; run \`alfred reindex\` if memories exist.`,
    );
    return 0;
  } catch (err) {
    io.err(`alfred models pull failed: ${(err as Error).message}`);
    return 1;
  }
}
