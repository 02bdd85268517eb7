import { pollUntil } from '#testing';
import { emptyChat, type ChannelStore } from './channel.store.js';

export interface ChannelStoreFixture {
  readonly store: ChannelStore;
  /** A second instance over the same storage (another process's view). */
  readonly peer: ChannelStore;
  cleanup(): Promise<void>;
}

/** What every ChannelStore adapter must do; run it from each adapter's spec. */
export function channelStoreContract(
  name: string,
  describeFn: jest.Describe,
  makeFixture: () => Promise<ChannelStoreFixture>,
): void {
  describeFn(`${name} (channel store contract)`, () => {
    let fx: ChannelStoreFixture;
    beforeEach(async () => {
      fx = await makeFixture();
    });
    afterEach(() => fx.cleanup());

    it('should keep a chat and show it to another instance', async () => {
      expect(await fx.store.getChat('42')).toBeUndefined();
      await fx.store.updateChat('42', (s) => ({ ...(s ?? emptyChat('alfred')), sessions: { alfred: 'sess-1' } }));
      expect(await fx.peer.getChat('42')).toEqual({
        agent: 'alfred',
        sessions: { alfred: 'sess-1' },
        confirmations: {},
      });
    });

    it('should lose no change when instances update one chat at once', async () => {
      const bump = (store: ChannelStore, i: number) =>
        store.updateChat('-100:7', (s) => {
          const base = s ?? emptyChat('alfred');
          return { ...base, sessions: { ...base.sessions, [`agent-${i}`]: `s${i}` } };
        });
      await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? fx.store : fx.peer, i)));
      expect(Object.keys((await fx.store.getChat('-100:7'))!.sessions)).toHaveLength(20);
    });

    it('should keep update records, and forget done ones after their retention', async () => {
      await fx.store.putUpdate(7, { status: 'running', turn_id: 'turn-1', reply_message_ids: [3] }, 60_000);
      expect(await fx.peer.getUpdate(7)).toEqual({ status: 'running', turn_id: 'turn-1', reply_message_ids: [3] });
      await fx.store.putUpdate(7, { status: 'done' }, 150);
      expect((await fx.peer.getUpdate(7))?.status).toBe('done');
      await pollUntil(async () => (await fx.peer.getUpdate(7)) === undefined, 5_000, 'the record to expire');
    });

    it('should let an owner hold and renew the poller lease', async () => {
      expect(await fx.store.holdPoller('a', 5_000)).toBe(true);
      expect(await fx.store.holdPoller('a', 5_000)).toBe(true);
      await fx.store.releasePoller('a');
    });
  });
}
