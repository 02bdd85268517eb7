import { appendFile, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metrics } from '#metrics';
import { JsonlLog } from './jsonl-log.js';

describe(JsonlLog.name, () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-jsonl-'));
    path = join(dir, 'log.jsonl');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('readAt', () => {
    it('should read back exactly the records at the positions appends reported, also from a new instance', async () => {
      const log = new JsonlLog<{ n: number; text: string }>(path);
      const positions = [];
      for (let n = 0; n < 20; n++) positions.push(await log.append({ n, text: `é-${'x'.repeat(n)}` }));

      expect(await log.readAt([positions[3]!, positions[17]!, positions[0]!])).toEqual([
        { n: 3, text: 'é-xxx' },
        { n: 17, text: `é-${'x'.repeat(17)}` },
        { n: 0, text: 'é-' },
      ]);
      await log.close();
      const reopened = new JsonlLog<{ n: number }>(path);
      const scanned = await reopened.scan();
      expect(scanned.map((s) => ({ offset: s.offset, length: s.length }))).toEqual(positions);
      expect((await reopened.readAt([scanned[5]!])).map((r) => r.n)).toEqual([5]);
      await reopened.close();
    });

    it('should skip a torn last line on scan, and report positions after it on a fresh line', async () => {
      const log = new JsonlLog<{ n: number }>(path);
      await log.append({ n: 1 });
      await log.close();
      await appendFile(path, '{"n":');
      const again = new JsonlLog<{ n: number }>(path);

      expect((await again.scan()).map((s) => s.record)).toEqual([{ n: 1 }]);
      const at = await again.append({ n: 2 });
      expect(await again.readAt([at])).toEqual([{ n: 2 }]);
      expect(await again.readAll()).toEqual([{ n: 1 }, { n: 2 }]);
      await again.close();
    });
  });

  describe('sync', () => {
    const syncs = async () =>
      (await Metrics.logSyncs.get()).values.find((v) => v.labels.log === 'sync-spec')?.value ?? 0;

    it('should make lines appended without a sync durable, one fsync shared by the calls waiting', async () => {
      const log = new JsonlLog<{ n: number }>(path, 'sync-spec');
      const before = await syncs();
      // Durable appends (the O_DSYNC handle) and plain ones go to one file, each line where it was reported.
      const at = await Promise.all([log.append({ n: 1 }, false), log.append({ n: 2 }), log.append({ n: 3 }, false)]);
      expect(await syncs()).toBe(before + 1);
      await log.append({ n: 4 }, false);
      await log.append({ n: 5 }, false);
      await Promise.all([log.sync(), log.sync(), log.sync()]);
      expect(await syncs()).toBe(before + 2);
      expect(await log.readAt(at)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(await log.readAll()).toEqual([1, 2, 3, 4, 5].map((n) => ({ n })));
      await log.close();
    });

    it('should have nothing to sync before its first append', async () => {
      const log = new JsonlLog<{ n: number }>(path, 'sync-spec');
      const before = await syncs();
      await log.sync();
      expect(await syncs()).toBe(before);
      expect(await readdir(dir)).toEqual([]);
    });
  });

  describe('rewrite', () => {
    it('should replace the content with the kept records, append after them and leave no temporary file', async () => {
      const log = new JsonlLog<{ n: number }>(path);
      for (let n = 0; n < 10; n++) await log.append({ n });

      const kept = await log.rewrite(() => [{ n: 7 }, { n: 9 }]);
      const next = await log.append({ n: 10 });

      expect(await log.readAt([...kept, next])).toEqual([{ n: 7 }, { n: 9 }, { n: 10 }]);
      expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(3);
      expect(await readdir(dir)).toEqual(['log.jsonl']);
      expect(await log.changedElsewhere()).toBe(false);
      await log.close();
    });
  });

  describe('changedElsewhere', () => {
    it('should notice lines another writer appended', async () => {
      const mine = new JsonlLog<{ n: number }>(path);
      const other = new JsonlLog<{ n: number }>(path);
      await mine.append({ n: 1 });
      expect(await mine.changedElsewhere()).toBe(false);

      await other.append({ n: 2 });

      expect(await mine.changedElsewhere()).toBe(true);
      await Promise.all([mine.close(), other.close()]);
    });
  });
});
