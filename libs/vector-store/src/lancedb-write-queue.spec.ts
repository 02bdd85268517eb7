import { LanceDbWriteQueue, type WriteMode } from './lancedb-write-queue.js';

/** A commit that waits until released, recording what each commit held. */
function gatedCommits() {
  const commits: Array<{ rows: string[]; mode: WriteMode }> = [];
  const gates: Array<() => void> = [];
  let fail: Error | undefined;
  const commit = async (rows: readonly string[], mode: WriteMode) => {
    commits.push({ rows: [...rows], mode });
    await new Promise<void>((resolve) => gates.push(resolve));
    if (fail) throw fail;
  };
  const releaseNext = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  /** Resolves once `n` commits have started. */
  const started = async (n: number) => {
    while (commits.length < n) await new Promise((r) => setImmediate(r));
  };
  return { commits, commit, releaseNext, started, failWith: (err: Error) => (fail = err) };
}

describe(LanceDbWriteQueue.name, () => {
  describe('write', () => {
    it('should commit writes that arrive during a commit together, resolving each only after its commit', async () => {
      const g = gatedCommits();
      const queue = new LanceDbWriteQueue<string>(g.commit);
      const resolved: string[] = [];
      const first = queue.write(['a'], 'insert').then(() => resolved.push('a'));
      await g.started(1);
      const second = queue.write(['b'], 'insert').then(() => resolved.push('b'));
      const third = queue.write(['c', 'd'], 'upsert').then(() => resolved.push('c'));
      await g.releaseNext();
      await first;
      expect(resolved).toEqual(['a']);
      await g.releaseNext();
      await Promise.all([second, third]);
      expect(g.commits).toEqual([
        { rows: ['a'], mode: 'insert' },
        { rows: ['b', 'c', 'd'], mode: 'upsert' },
      ]);
    });

    it('should reject every caller of a failed commit and go on with later writes', async () => {
      const g = gatedCommits();
      const queue = new LanceDbWriteQueue<string>(g.commit);
      const first = queue.write(['a'], 'insert');
      await g.started(1);
      const grouped = [queue.write(['b'], 'insert'), queue.write(['c'], 'insert')];
      await g.releaseNext();
      await first;
      g.failWith(new Error('disk full'));
      await g.releaseNext();
      for (const p of grouped) await expect(p).rejects.toThrow('disk full');
      expect(g.commits.map((c) => c.rows)).toEqual([['a'], ['b', 'c']]);
    });

    it('should not group more than maxRows rows into one commit', async () => {
      const g = gatedCommits();
      const queue = new LanceDbWriteQueue<string>(g.commit, 2);
      const all = [queue.write(['a'], 'insert'), queue.write(['b'], 'insert'), queue.write(['c'], 'insert'), queue.write(['d', 'e', 'f'], 'insert')];
      for (let i = 0; i < 3; i++) await g.releaseNext();
      await Promise.all(all);
      expect(g.commits.map((c) => c.rows)).toEqual([['a', 'b'], ['c'], ['d', 'e', 'f']]);
    });
  });

  describe('task', () => {
    it('should run a task alone, after the writes queued before it and before those queued after it', async () => {
      const g = gatedCommits();
      const queue = new LanceDbWriteQueue<string>(g.commit);
      const order: string[] = [];
      const w1 = queue.write(['a'], 'insert').then(() => order.push('write a'));
      const t = queue.task(async () => order.push('task'));
      const w2 = queue.write(['b'], 'insert').then(() => order.push('write b'));
      await g.releaseNext();
      await g.releaseNext();
      await Promise.all([w1, t, w2]);
      expect(order).toEqual(['write a', 'task', 'write b']);
      expect(g.commits.map((c) => c.rows)).toEqual([['a'], ['b']]);
    });

    it('should let only inserts pass a besideInserts task while it runs', async () => {
      const commits: string[][] = [];
      const queue = new LanceDbWriteQueue<string>(async (rows) => void commits.push([...rows]));
      let finish!: () => void;
      const maintenance = queue.besideInserts(() => new Promise<void>((resolve) => (finish = resolve)));
      const upsert = queue.write(['u'], 'upsert');
      const insert = queue.write(['i'], 'insert');
      const task = queue.task(async () => commits.push(['task']));
      const inserted = queue.write(['j'], 'insert');
      await new Promise((r) => setImmediate(r));
      expect(commits).toEqual([]);
      finish();
      await Promise.all([maintenance, upsert, insert, task, inserted]);
      expect(commits).toEqual([['u', 'i'], ['task'], ['j']]);

      let finishAgain!: () => void;
      const again = queue.besideInserts(() => new Promise<void>((resolve) => (finishAgain = resolve)));
      await queue.write(['k'], 'insert');
      const waiting = queue.write(['v'], 'upsert');
      expect(commits.at(-1)).toEqual(['k']);
      finishAgain();
      await Promise.all([again, waiting, queue.idle()]);
      expect(commits.at(-1)).toEqual(['v']);
    });

    it('should pass a task failure to its caller only', async () => {
      const queue = new LanceDbWriteQueue<string>(async () => undefined);
      const failing = queue.task(() => {
        throw new Error('boom');
      });
      const after = queue.write(['a'], 'insert');
      await expect(failing).rejects.toThrow('boom');
      await expect(after).resolves.toBeUndefined();
      await expect(queue.idle()).resolves.toBeUndefined();
    });
  });
});
