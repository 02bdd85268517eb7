import { ErrorCode, type Scope, type SessionMessage } from '#contracts';
import { AlfredError } from '#errors';
import type { SessionLease, SessionStore } from './session-store.js';

export interface SessionStoreFixture {
  readonly store: SessionStore;
  /** A second instance over the same storage (another process's view in the distributed shape). */
  readonly peer: SessionStore;
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

const user = (text: string): SessionMessage => ({ role: 'user', content: text });
const scope: Scope = { tenant: 'tenant-a', agent: 'alfred' };
const toolTurn: SessionMessage[] = [
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Listing.' },
      { type: 'tool_use', id: 'tu1', name: 'bash', input: { command: 'ls' } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'a.md', is_error: false }] },
];

/** Waits (on the condition, within 2 s) until `owner` takes the session's lease from a holder whose lease lapses. */
async function takeOver(store: SessionStore, id: string, owner: string): Promise<SessionLease | undefined> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const lease = await store.acquireLease(scope, id, owner, 10_000);
    if (lease || Date.now() >= deadline) return lease;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The behaviour every SessionStore adapter must show; run it from each adapter's spec. */
export function sessionStoreContract(
  name: string,
  describeFn: jest.Describe,
  makeFixture: () => Promise<SessionStoreFixture>,
): void {
  describeFn(`${name} (session store contract)`, () => {
    let fx: SessionStoreFixture;
    let store: SessionStore;

    beforeEach(async () => {
      fx = await makeFixture();
      store = fx.store;
    });
    afterEach(() => fx.cleanup());

    describe('create/get', () => {
      it('should return the existing session, unchanged, when created again under the same id', async () => {
        const first = await store.create(scope, { metadata: { try: 1 }, id: 'keyed-session-1' });
        const again = await store.create(scope, { metadata: { try: 2 }, id: 'keyed-session-1' });
        expect(again).toMatchObject({ id: 'keyed-session-1', metadata: { try: 1 }, created_at: first.created_at });
      });

      it('should create an empty session at version 0 that get returns', async () => {
        const created = await store.create(scope, { metadata: { channel: 'cli' } });

        const got = await store.get(scope, created.id);

        expect(got).toEqual(created);
        expect(got).toMatchObject({
          agent: 'alfred',
          version: 0,
          messages: [],
          active_skill: null,
          loaded_skills: [],
          metadata: { channel: 'cli' },
        });
      });

      it('should not show a session to another agent or tenant', async () => {
        const { id } = await store.create(scope);

        expect((await rejection(store.get({ ...scope, agent: 'other' }, id))).code).toBe(ErrorCode.NotFound);
        expect((await rejection(store.get({ ...scope, tenant: 'tenant-b' }, id))).code).toBe(ErrorCode.NotFound);
        expect((await rejection(store.get(scope, '../../etc'))).code).toBe(ErrorCode.NotFound);
      });
    });

    describe('append', () => {
      it('should append messages with tool blocks in order and bump the version', async () => {
        const { id } = await store.create(scope);

        await store.append(scope, id, [user('list files')]);
        const result = await store.append(scope, id, toolTurn);

        expect(result).toEqual({ id, version: 2, message_count: 3, appended: 2 });
        const got = await fx.peer.get(scope, id);
        expect(got.messages).toEqual([user('list files'), ...toolTurn]);
        expect(got.version).toBe(2);
      });

      it('should refuse to append to a missing session', async () => {
        expect((await rejection(store.append(scope, 'missing', [user('x')]))).code).toBe(ErrorCode.NotFound);
      });

      it('should keep all 50 concurrent appends from two instances, each writer in its own order', async () => {
        const { id } = await store.create(scope);
        const writes = (writer: SessionStore, tag: string) =>
          Array.from({ length: 25 }, (_, i) => writer.append(scope, id, [user(`${tag}-${i}`)]));

        await Promise.all([...writes(store, 'a'), ...writes(fx.peer, 'b')]);

        const got = await store.get(scope, id);
        const texts = got.messages.map((m) => m.content as string);
        expect(texts).toHaveLength(50);
        expect(got.version).toBe(50);
        for (const tag of ['a', 'b']) {
          expect(texts.filter((t) => t.startsWith(`${tag}-`))).toEqual(
            Array.from({ length: 25 }, (_, i) => `${tag}-${i}`),
          );
        }
      });
    });

    describe('replace', () => {
      it('should replace the messages at the expected version and store the token count', async () => {
        const { id } = await store.create(scope);
        await store.append(scope, id, [user('one'), user('two'), user('three')]);

        const version = await store.replace(scope, id, {
          messages: [user('summary')],
          expectedVersion: 1,
          tokens: { count: 9, source: 'estimate' },
        });

        const got = await store.get(scope, id);
        expect(version).toBe(2);
        expect(got.messages).toEqual([user('summary')]);
        expect(got.tokens).toEqual({ count: 9, source: 'estimate', at_version: 2 });
      });

      it('should refuse with CONFLICT when the version moved, and change nothing', async () => {
        const { id } = await store.create(scope);
        await store.append(scope, id, [user('one')]);
        await fx.peer.append(scope, id, [user('two')]);

        const err = await rejection(store.replace(scope, id, { messages: [], expectedVersion: 1 }));

        expect(err.code).toBe(ErrorCode.Conflict);
        expect(err.details).toMatchObject({ expected_version: 1, version: 2 });
        expect((await store.get(scope, id)).messages).toHaveLength(2);
      });
    });

    describe('setActiveSkill/setTokens', () => {
      it('should set the active skill and remember every loaded skill', async () => {
        const { id } = await store.create(scope);

        await store.setActiveSkill(scope, id, 'pdf');
        await store.setActiveSkill(scope, id, 'distill');
        await store.setActiveSkill(scope, id, null);
        await store.setTokens(scope, id, { count: 120, source: 'model', at_version: 0 });

        const got = await store.get(scope, id);
        expect(got.active_skill).toBeNull();
        expect(got.loaded_skills).toEqual(['distill', 'pdf']);
        expect(got.tokens).toEqual({ count: 120, source: 'model', at_version: 0 });
        expect(got.version).toBe(0);
      });
    });

    describe('delete/list', () => {
      it("should list an agent's sessions newest first and forget deleted ones", async () => {
        const first = await store.create(scope);
        await new Promise((r) => setTimeout(r, 5)); // distinct creation timestamps order the list
        const second = await store.create(scope);
        await store.create({ ...scope, agent: 'other' });

        expect((await store.list(scope)).sessions.map((s) => s.id)).toEqual([second.id, first.id]);
        expect(await store.delete(scope, first.id)).toBe(true);
        expect(await store.delete(scope, first.id)).toBe(false);
        const after = await store.list(scope);
        expect(after).toMatchObject({ total: 1, sessions: [{ id: second.id, message_count: 0 }] });
        expect((await rejection(store.get(scope, first.id))).code).toBe(ErrorCode.NotFound);
      });

      it('should show the start of the first message in the list and in get, or null before there is one', async () => {
        const s = await store.create(scope);
        expect((await store.list(scope)).sessions[0]!.first_message).toBeNull();
        await store.append(scope, s.id, [
          user(`  Plan   the trip to Lisbon. ${'More detail. '.repeat(30)}`),
          ...toolTurn,
        ]);
        const listed = (await fx.peer.list(scope)).sessions[0]!.first_message!;
        expect(listed.startsWith('Plan the trip to Lisbon. More detail.')).toBe(true);
        expect(listed.length).toBeLessThanOrEqual(200);
        expect(listed.length).toBeGreaterThan(190);
        expect(listed.endsWith('…')).toBe(true);
        expect((await store.get(scope, s.id)).first_message).toBe(listed);
      });
    });

    describe('owners', () => {
      it('should name the agent a session belongs to, for its tenant only', async () => {
        const jarvis = { ...scope, agent: 'jarvis' };
        const { id } = await store.create(jarvis);

        expect(await fx.peer.locate(scope.tenant, id)).toBe('jarvis');
        expect(await fx.peer.locate('tenant-b', id)).toBeUndefined();
        expect(await store.locate(scope.tenant, '00000000-0000-0000-0000-000000000000')).toBeUndefined();
        await store.delete(jarvis, id);
        expect(await fx.peer.locate(scope.tenant, id)).toBeUndefined();
      });

      it('should delete every session of one agent and leave the others', async () => {
        const jarvis = { ...scope, agent: 'jarvis' };
        const [a, b] = [await store.create(jarvis), await store.create(jarvis)];
        const mine = await store.create(scope);

        expect(await fx.peer.deleteAll(jarvis)).toBe(2);
        expect((await store.list(jarvis)).total).toBe(0);
        expect(await store.locate(scope.tenant, a.id)).toBeUndefined();
        expect(await store.locate(scope.tenant, b.id)).toBeUndefined();
        expect((await store.get(scope, mine.id)).id).toBe(mine.id);
        expect(await fx.peer.deleteAll(jarvis)).toBe(0);
      });
    });

    describe('leases', () => {
      it('should give the lease to one owner at a time and release it only to its holder', async () => {
        const { id } = await store.create(scope);

        const first = await store.acquireLease(scope, id, 'worker-1', 10_000);
        expect(first).toEqual({ owner: 'worker-1', token: expect.any(Number) });
        expect(await fx.peer.acquireLease(scope, id, 'worker-2', 10_000)).toBeUndefined();
        expect(await store.acquireLease(scope, id, 'worker-1', 10_000)).toEqual(first);
        expect(await store.renewLease(scope, id, 'worker-1', 10_000)).toBe(true);
        expect(await fx.peer.renewLease(scope, id, 'worker-2', 10_000)).toBe(false);
        expect(await fx.peer.releaseLease(scope, id, 'worker-2')).toBe(false);
        expect(await store.releaseLease(scope, id, 'worker-1')).toBe(true);
        const second = await fx.peer.acquireLease(scope, id, 'worker-2', 10_000);
        expect(second?.token).toBeGreaterThan(first!.token);
      });

      it('should refuse a lease on a missing session', async () => {
        expect(
          (await rejection(store.acquireLease(scope, '00000000-0000-0000-0000-000000000000', 'worker-1', 1_000))).code,
        ).toBe(ErrorCode.NotFound);
      });

      it('should let another owner take an expired lease', async () => {
        const { id } = await store.create(scope);
        await store.acquireLease(scope, id, 'worker-1', 30);
        const taken = await takeOver(fx.peer, id, 'worker-2');

        expect(taken?.owner).toBe('worker-2');
        expect(await store.renewLease(scope, id, 'worker-1', 1_000)).toBe(false);
      });

      it("should refuse every write of a holder whose lease another worker took; the new holder's stay", async () => {
        const { id } = await store.create(scope);
        const stale = (await store.acquireLease(scope, id, 'worker-1', 30))!;
        await store.append(scope, id, [user('from worker-1')], { fence: stale });
        const fresh = await takeOver(fx.peer, id, 'worker-2');
        await fx.peer.append(scope, id, [user('from worker-2')], { fence: fresh });

        const refused = await rejection(store.append(scope, id, [user('late worker-1')], { fence: stale }));
        expect(refused.code).toBe(ErrorCode.Conflict);
        expect(refused.message).toMatch(/leased to another holder/);
        expect(refused.details).toMatchObject({
          reason: 'lease_lost',
          token: stale.token,
          current_token: fresh!.token,
        });
        for (const write of [
          store.setActiveSkill(scope, id, 'pdf', { fence: stale }),
          store.setTokens(scope, id, { count: 1, source: 'estimate', at_version: 2 }, { fence: stale }),
          store.replace(scope, id, { messages: [], expectedVersion: 2, fence: stale }),
        ]) {
          expect((await rejection(write)).details).toMatchObject({ reason: 'lease_lost' });
        }

        const got = await store.get(scope, id);
        expect(got.messages).toEqual([user('from worker-1'), user('from worker-2')]);
        expect(got).toMatchObject({ version: 2, active_skill: null, tokens: null });
        await fx.peer.append(scope, id, [user('worker-2 again')], { fence: fresh });
        expect((await store.get(scope, id)).messages).toHaveLength(3);
      });

      it("should keep accepting the newest holder's fence after its release, until someone else acquires", async () => {
        const { id } = await store.create(scope);
        const lease = (await store.acquireLease(scope, id, 'worker-1', 10_000))!;
        await store.releaseLease(scope, id, 'worker-1');

        await store.append(scope, id, [user('closing write')], { fence: lease });
        const next = (await fx.peer.acquireLease(scope, id, 'worker-2', 10_000))!;

        expect(next.token).toBeGreaterThan(lease.token);
        expect((await rejection(store.append(scope, id, [user('too late')], { fence: lease }))).details).toMatchObject({
          reason: 'lease_lost',
        });
        expect((await store.get(scope, id)).messages).toEqual([user('closing write')]);
      });
    });

    describe('list paging', () => {
      it('should page newest first and count every session', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push((await store.create(scope)).id);
          await new Promise((r) => setTimeout(r, 3)); // distinct creation timestamps order the list
        }
        const newestFirst = [...ids].reverse();

        const second = await fx.peer.list(scope, { offset: 2, limit: 2 });
        const past = await store.list(scope, { offset: 10, limit: 2 });

        expect(second.total).toBe(5);
        expect(second.sessions.map((s) => s.id)).toEqual(newestFirst.slice(2, 4));
        expect(past).toEqual({ sessions: [], total: 5 });
      });
    });
  });
}
