import { createHash } from 'node:crypto';
import { AgentFileHistoryEntry, ErrorCode, type Scope } from '#contracts';
import { AlfredError } from '#errors';
import type { AgentFileStore } from './agent-file-store.js';

export interface AgentFileStoreFixture {
  readonly store: AgentFileStore;
  /** A second instance over the same storage. */
  readonly peer: AgentFileStore;
  cleanup(): Promise<void>;
}

async function rejection(p: Promise<unknown>): Promise<AlfredError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AlfredError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

const scope: Scope = { tenant: 'tenant-a', agent: 'alfred' };
const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

/** The behaviour every AgentFileStore adapter must show; run it from each adapter's spec. */
export function agentFileStoreContract(
  name: string,
  describeFn: jest.Describe,
  makeFixture: () => Promise<AgentFileStoreFixture>,
): void {
  describeFn(`${name} (agent file store contract)`, () => {
    let fx: AgentFileStoreFixture;
    let store: AgentFileStore;

    beforeEach(async () => {
      fx = await makeFixture();
      store = fx.store;
    });
    afterEach(() => fx.cleanup());

    describe('read', () => {
      it('should return a default header at version 0 for a file never written', async () => {
        const file = await store.read(scope, 'soul');

        expect(file).toEqual({ content: expect.stringMatching(/^# SOUL\.md\n/), version: 0, updated_at: null });
        expect(await store.history(scope, 'soul')).toEqual([]);
      });
    });

    describe('write', () => {
      it('should store a new version that every instance reads', async () => {
        const v1 = await store.write(scope, 'user', '# USER.md\n\n- prefers tea\n', { reason: 'learn: tea' });
        const v2 = await store.write(scope, 'user', '# USER.md\n\n- prefers coffee\n', {
          reason: 'learn: coffee',
          expectedVersion: 1,
        });

        const read = await fx.peer.read(scope, 'user');
        expect([v1, v2]).toEqual([1, 2]);
        expect(read).toMatchObject({ content: '# USER.md\n\n- prefers coffee\n', version: 2 });
        expect(Date.parse(read.updated_at ?? '')).not.toBeNaN();
      });

      it('should refuse with CONFLICT when the expected version moved, and keep the file', async () => {
        await store.write(scope, 'memory', 'one', { reason: 'first' });
        await fx.peer.write(scope, 'memory', 'two', { reason: 'second' });

        const err = await rejection(store.write(scope, 'memory', 'three', { reason: 'late', expectedVersion: 1 }));

        expect(err.code).toBe(ErrorCode.Conflict);
        expect(err.details).toMatchObject({ expected_version: 1, version: 2 });
        expect((await store.read(scope, 'memory')).content).toBe('two');
      });

      it('should let exactly one of several writers at the same expected version win', async () => {
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? fx.peer : store).write(scope, 'soul', `v-${i}`, { reason: `w${i}`, expectedVersion: 0 }),
          ),
        );

        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((await store.history(scope, 'soul')).map((e) => e.version)).toEqual([1]);
      });

      it('should keep every version of concurrent unconditional writes', async () => {
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? fx.peer : store).write(scope, 'memory', `n${i}`, { reason: `r${i}` }),
          ),
        );

        const history = await store.history(scope, 'memory');
        expect(history.map((e) => e.version)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
        expect(new Set(history.map((e) => e.reason)).size).toBe(10);
      });

      it('should keep files of other agents, tenants and kinds apart', async () => {
        await store.write(scope, 'user', 'mine', { reason: 'r' });

        expect((await store.read({ ...scope, agent: 'other' }, 'user')).version).toBe(0);
        expect((await store.read({ ...scope, tenant: 'tenant-b' }, 'user')).version).toBe(0);
        expect((await store.read(scope, 'soul')).version).toBe(0);
      });
    });

    describe('writer', () => {
      it('should keep who made each version with it, and who restored', async () => {
        await store.write(scope, 'soul', 'calm', { reason: 'edit', writer: { key: 'key-abc', via: 'rest' } });
        await store.restore(scope, 'soul', 1, { writer: { key: 'key-def', via: 'rest' } });
        const history = await fx.peer.history(scope, 'soul');
        expect(history.map((e) => e.writer)).toEqual([
          { key: 'key-def', via: 'rest' },
          { key: 'key-abc', via: 'rest' },
        ]);
        expect((await store.readVersion(scope, 'soul', 1)).writer).toEqual({ key: 'key-abc', via: 'rest' });
      });
    });

    describe('history/readVersion', () => {
      it('should list versions newest first with reason, size and digest, and read any of them', async () => {
        await store.write(scope, 'user', 'héllo', { reason: 'first' });
        await store.write(scope, 'user', 'second text', { reason: 'second' });

        const history = await store.history(scope, 'user');
        const first = await fx.peer.readVersion(scope, 'user', 1);

        expect(history.map((e) => AgentFileHistoryEntry.parse(e))).toEqual([
          { version: 2, at: expect.any(String), reason: 'second', size: 11, digest: sha('second text') },
          { version: 1, at: expect.any(String), reason: 'first', size: 6, digest: sha('héllo') },
        ]);
        expect(first).toMatchObject({ version: 1, content: 'héllo', reason: 'first' });
        expect((await rejection(store.readVersion(scope, 'user', 3))).code).toBe(ErrorCode.NotFound);
      });
    });

    describe('restore', () => {
      it('should write a new version equal to the old one and keep the history', async () => {
        await store.write(scope, 'soul', 'calm', { reason: 'a' });
        await store.write(scope, 'soul', 'loud', { reason: 'b' });

        const version = await store.restore(scope, 'soul', 1);

        expect(version).toBe(3);
        expect(await store.read(scope, 'soul')).toMatchObject({ content: 'calm', version: 3 });
        const history = await store.history(scope, 'soul');
        expect(history[0]).toMatchObject({ version: 3, reason: 'restore of version 1', digest: sha('calm') });
        expect(history).toHaveLength(3);
        expect((await rejection(store.restore(scope, 'soul', 9))).code).toBe(ErrorCode.NotFound);
      });
    });

    describe('deleteAll', () => {
      it("should remove every file and version of the agent and keep other agents' files", async () => {
        await store.write(scope, 'user', 'u', { reason: 'r' });
        await store.write(scope, 'soul', 's', { reason: 'r' });
        await store.write({ ...scope, agent: 'keep' }, 'user', 'kept', { reason: 'r' });

        expect(await store.deleteAll(scope)).toBe(2);

        expect((await fx.peer.read(scope, 'user')).version).toBe(0);
        expect(await fx.peer.history(scope, 'soul')).toEqual([]);
        expect((await fx.peer.read({ ...scope, agent: 'keep' }, 'user')).content).toBe('kept');
        expect(await store.deleteAll(scope)).toBe(0);
      });
    });
  });
}
