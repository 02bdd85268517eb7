import { pollUntil } from '#testing';
import type { TurnStateStore } from './turn-state.store.js';

const scope = { tenant: 't', agent: 'jarvis' };

/** The turn-state store's behaviour, run against every adapter. */
export function turnStateContract(make: () => Promise<{ store: TurnStateStore; dispose(): Promise<void> }>): void {
  let fx: { store: TurnStateStore; dispose(): Promise<void> };
  beforeEach(async () => (fx = await make()));
  afterEach(() => fx.dispose());

  it("should keep the session's current turn and clear it only for that turn", async () => {
    await fx.store.setCurrent(scope, 's1', { turn_id: 'turn-a', worker: 'w1' }, 10_000);
    await fx.store.clearCurrent(scope, 's1', 'turn-b');
    expect(await fx.store.current(scope, 's1')).toEqual({ turn_id: 'turn-a', worker: 'w1' });
    expect(await fx.store.current({ ...scope, agent: 'other' }, 's1')).toBeUndefined();
    await fx.store.clearCurrent(scope, 's1', 'turn-a');
    expect(await fx.store.current(scope, 's1')).toBeUndefined();
  });

  it('should forget the current turn when it expires (a dead worker stops refreshing it)', async () => {
    await fx.store.setCurrent(scope, 's2', { turn_id: 'turn-a', worker: 'w1' }, 50);
    await pollUntil(
      async () => (await fx.store.current(scope, 's2')) === undefined,
      2_000,
      'the current turn to expire',
    );
  });

  it('should record one answer per confirmation: unknown, first answer, then answered', async () => {
    expect(await fx.store.answer(scope, 's1', 'confirm-x', true)).toBe('unknown');
    await fx.store.openConfirmation(
      scope,
      's1',
      { request_id: 'confirm-x', turn_id: 'turn-a', skill: 'recall' },
      10_000,
    );
    expect(await fx.store.answerOf(scope, 's1', 'confirm-x')).toBeUndefined();
    const answers = await Promise.all([
      fx.store.answer(scope, 's1', 'confirm-x', false),
      fx.store.answer(scope, 's1', 'confirm-x', true),
    ]);
    expect(answers.filter((a) => a === 'answered')).toHaveLength(1);
    expect(answers).toContainEqual({ turn_id: 'turn-a' });
    expect(await fx.store.answerOf(scope, 's1', 'confirm-x')).toBe(answers[0] === 'answered');
    expect(await fx.store.answer({ ...scope, agent: 'other' }, 's1', 'confirm-x', true)).toBe('unknown');
  });

  it('should refuse an answer, saying why, once the turn stopped waiting; an answered one stays answered', async () => {
    await fx.store.openConfirmation(
      scope,
      's3',
      { request_id: 'confirm-y', turn_id: 'turn-a', skill: 'recall' },
      10_000,
    );
    await fx.store.closeConfirmation(scope, 's3', 'confirm-y', 'cancelled');
    expect(await fx.store.answer(scope, 's3', 'confirm-y', true)).toEqual({ closed: 'cancelled' });
    expect(await fx.store.answerOf(scope, 's3', 'confirm-y')).toBeUndefined();
    await fx.store.openConfirmation(
      scope,
      's3',
      { request_id: 'confirm-z', turn_id: 'turn-a', skill: 'recall' },
      10_000,
    );
    expect(await fx.store.answer(scope, 's3', 'confirm-z', false)).toEqual({ turn_id: 'turn-a' });
    await fx.store.closeConfirmation(scope, 's3', 'confirm-z', 'cancelled');
    expect(await fx.store.answerOf(scope, 's3', 'confirm-z')).toBe(false);
    expect(await fx.store.answer(scope, 's3', 'confirm-z', true)).toBe('answered');
  });

  it('should flag a cancel request for a turn', async () => {
    expect(await fx.store.cancelRequested('turn-a')).toBe(false);
    await fx.store.requestCancel('turn-a', 10_000);
    expect(await fx.store.cancelRequested('turn-a')).toBe(true);
  });
}
