import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileKvStore } from '#files';
import { LanceDbStore } from '#vector-store';
import { LEGACY_SKILL_PROVENANCE, moveSkillProvenanceRows } from './skill-provenance.migration.js';
import { SkillProvenanceRepository } from './skill-provenance.repository.js';

describe(SkillProvenanceRepository.name, () => {
  let tmp: string;
  let store: LanceDbStore;
  let repo: SkillProvenanceRepository;
  const alice = { agent: 'alice', key: 'key-a', via: 'rest', source: 'runbook.md' };
  const bob = { agent: 'bob', session: 's-1', turn: 't-1', via: 'tool:skill_update' };
  const shown = async (tenant: string, kind: 'skill' | 'executable', name: string) =>
    (await repo.decorate(tenant, kind, [{ name }], (s) => s.name))[0] as {
      name: string;
      provenance?: Record<string, unknown>;
    };

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-skill-provenance-'));
    store = new LanceDbStore({ dir: tmp });
    repo = new SkillProvenanceRepository(new FileKvStore(join(tmp, 'kv')));
  });
  afterEach(async () => {
    await store.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe('around', () => {
    it('should record the writer of a write that succeeds and show it per tenant and kind', async () => {
      expect(await repo.around('t', 'executable', 'adder', alice, async () => 'written')).toBe('written');
      expect((await shown('t', 'executable', 'adder')).provenance).toEqual({
        tenant: 't',
        ...alice,
        written_at: expect.any(String),
      });
      expect((await shown('t', 'skill', 'adder')).provenance).toBeUndefined();
      expect((await shown('other', 'executable', 'adder')).provenance).toBeUndefined();
    });

    it('should put the previous writer back when the write fails, and record none for a failed first one', async () => {
      await repo.around('t', 'executable', 'adder', alice, async () => undefined);
      const before = (await shown('t', 'executable', 'adder')).provenance;
      await expect(
        repo.around('t', 'executable', 'adder', bob, async () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await shown('t', 'executable', 'adder')).provenance).toEqual(before);
      await expect(
        repo.around('t', 'skill', 'new-one', bob, async () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await shown('t', 'skill', 'new-one')).provenance).toBeUndefined();
    });

    it('should record the latest writer of a change', async () => {
      await repo.around('t', 'executable', 'adder', alice, async () => undefined);
      await repo.around('t', 'executable', 'adder', bob, async () => undefined);
      expect((await shown('t', 'executable', 'adder')).provenance).toEqual({
        tenant: 't',
        ...bob,
        written_at: expect.any(String),
      });
    });
  });

  describe('matching', () => {
    it('should find the names of one kind whose writer matches every filter', async () => {
      await repo.around('t', 'skill', 'a', alice, async () => undefined);
      await repo.around('t', 'skill', 'b', bob, async () => undefined);
      await repo.around('t', 'executable', 'c', bob, async () => undefined);
      expect([...(await repo.matching('t', 'skill', { written_session: 's-1' }))]).toEqual(['b']);
      expect([...(await repo.matching('t', 'skill', { written_via: 'rest', written_source: 'runbook.md' }))]).toEqual([
        'a',
      ]);
      expect([...(await repo.matching('t', 'skill', { written_via: 'rest', written_key: 'key-b' }))]).toEqual([]);
      expect([...(await repo.matching('t', 'executable', { written_via: 'tool:skill_update' }))]).toEqual(['c']);
      await repo.forget('t', 'executable', 'c');
      expect([...(await repo.matching('t', 'executable', { written_via: 'tool:skill_update' }))]).toEqual([]);
    });
  });

  describe(moveSkillProvenanceRows.name, () => {
    it("should move an earlier version's provenance rows to the bucket, keep newer ones, drop the rows", async () => {
      const legacy = await store.open(LEGACY_SKILL_PROVENANCE);
      const row = (kind: string, name: string, via: string) => ({
        id: `${kind}:${name}`,
        tenant: 't',
        agent: '_skill_provenance',
        text: name,
        vector: new Float32Array(8).fill(0.3),
        fields: {
          kind,
          name,
          writer_agent: 'alice',
          session: null,
          turn: null,
          key: 'key-a',
          via,
          source: null,
          written_at: '2026-01-01T00:00:00.000Z',
        },
      });
      await legacy.upsert([row('skill', 'old', 'rest'), row('executable', 'adder', 'rest')]);
      await repo.around('t', 'executable', 'adder', bob, async () => undefined);

      expect(await moveSkillProvenanceRows(store, repo)).toBe(2);

      expect((await shown('t', 'skill', 'old')).provenance).toEqual({
        tenant: 't',
        agent: 'alice',
        key: 'key-a',
        via: 'rest',
        written_at: '2026-01-01T00:00:00.000Z',
      });
      expect((await shown('t', 'executable', 'adder')).provenance).toMatchObject({ agent: 'bob' });
      expect(await store.describe('skill_provenance')).toBeUndefined();
    });
  });
});
