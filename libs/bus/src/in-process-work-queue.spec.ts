import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '#testing';
import { z } from 'zod';
import { InProcessWorkQueue } from './in-process-work-queue.js';
import { queueDef } from './queue.js';

const quiet = { error: () => undefined, warn: () => undefined };
const def = queueDef({
  name: 'compacted-jobs',
  stream: 'JOBS',
  subject: 'alfred.jobs.compacted.v1',
  payload: z.object({ id: z.string() }),
  backoffMs: [5],
});

describe(InProcessWorkQueue.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-queue-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const lines = async () =>
    (await readFile(join(dir, 'compacted-jobs.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { op: string; id: string });

  describe('compaction', () => {
    it('should drop settled jobs from the log once enough piled up, keeping the unsettled for next start', async () => {
      const queue = new InProcessWorkQueue(def, dir, quiet, 5);
      const done: string[] = [];
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => (release = r));
      const consuming = await queue.consume(
        async ({ id }) => {
          if (id.startsWith('slow')) await gate; // does not settle while this instance is looked at
          done.push(id);
        },
        { concurrency: 2 },
      );
      await queue.enqueue({ id: 'slow-1' }, { msgId: 'slow-1' });
      for (let i = 0; i < 12; i++) await queue.enqueue({ id: `fast-${i}` }, { msgId: `fast-${i}` });
      await pollUntil(() => done.length === 12, 5_000, 'the fast jobs');
      await pollUntil(() => queue.settledInLog < 5, 5_000, 'a compaction');
      // The first instance is now left alone, as a killed process would be, with the slow job unsettled.

      const kept = await lines();
      expect(kept.filter((l) => l.op === 'done').length).toBeLessThan(5);
      expect(kept.filter((l) => l.op === 'job').map((l) => l.id)).toContain('slow-1');
      // The ids it deduplicates by are at most the log's (a job settled during the rewrite is forgotten a little
      // early), and the unsettled job's among them: bounded by the work in hand, not all 13 jobs ever enqueued.
      const remembered = await queue.rememberedIds();
      expect(remembered).toBeLessThanOrEqual(new Set(kept.map((l) => l.id)).size);
      expect(remembered).toBeGreaterThanOrEqual(1);
      await queue.enqueue({ id: 'slow-1' }, { msgId: 'slow-1' }); // still deduplicated while unsettled
      expect((await lines()).filter((l) => l.op === 'job' && l.id === 'slow-1')).toHaveLength(1);

      const next = new InProcessWorkQueue(def, dir, quiet, 5);
      const rerun: string[] = [];
      const c2 = await next.consume(async ({ id }) => void rerun.push(id));
      await pollUntil(() => rerun.includes('slow-1'), 2_000, 'the unsettled job');
      await c2.stop();
      expect(rerun).toEqual(['slow-1']);
      await next.close();
      release();
      await consuming.stop();
      await queue.close();
    });

    it('should compact a long log of settled jobs when it is opened', async () => {
      const queue = new InProcessWorkQueue(def, dir, quiet, 1_000);
      const c = await queue.consume(async () => undefined);
      for (let i = 0; i < 8; i++) await queue.enqueue({ id: `j${i}` }, { msgId: `j${i}` });
      await pollUntil(() => queue.settledInLog === 8, 2_000, 'the jobs');
      await c.stop();
      await queue.enqueue({ id: 'open' }, { msgId: 'open' });
      await queue.close();
      expect(await lines()).toHaveLength(17);

      const reopened = new InProcessWorkQueue(def, dir, quiet, 4);
      const ran: string[] = [];
      const c2 = await reopened.consume(async ({ id }) => void ran.push(id));
      await pollUntil(() => ran.length === 1, 2_000, 'the open job');
      await c2.stop();
      await reopened.close();

      expect(ran).toEqual(['open']);
      expect((await lines()).map((l) => `${l.op}:${l.id}`)).toEqual(['job:open', 'done:open']);
    });
  });
});
