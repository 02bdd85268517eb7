import { NatsBus } from './nats.bus.js';
import { sanitizeStreamName } from './subject.js';

/**
 * Deletes the JetStream streams a test created under its subject prefix (tests, benchmarks), so repeated runs do not
 * leave storage behind on the shared NATS server.
 */
export async function deleteStreamsWithPrefix(natsUrl: string, subjectPrefix: string): Promise<string[]> {
  const bus = await NatsBus.connect({ url: natsUrl, name: 'test-cleanup' });
  try {
    const jsm = await bus.jsm();
    const prefix = sanitizeStreamName(subjectPrefix);
    const deleted: string[] = [];
    for await (const info of jsm.streams.list()) {
      // A KV bucket's stream is `KV_<bucket>` (counters, idempotency keys): its bucket carries the prefix.
      if (info.config.name.startsWith(prefix) || info.config.name.startsWith(`KV_${prefix}`)) {
        await jsm.streams.delete(info.config.name);
        deleted.push(info.config.name);
      }
    }
    return deleted;
  } finally {
    await bus.close();
  }
}
