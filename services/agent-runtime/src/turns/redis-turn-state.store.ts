import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import type { Scope } from '#contracts';
import { key, type AnswerOutcome, type CurrentTurn, type PendingConfirmation, type TurnStateStore } from './turn-state.store.js';

/**
 * KEYS: confirmation hash. ARGV: answer ('1'/'0', or 'x:<reason>' to close it unanswered). Returns the turn id,
 * '' when unknown, '!' followed by the earlier answer when there was one.
 */
const ANSWER = `
local turn = redis.call('HGET', KEYS[1], 'turn_id')
if not turn then return '' end
if redis.call('HSETNX', KEYS[1], 'answer', ARGV[1]) == 0 then return '!' .. redis.call('HGET', KEYS[1], 'answer') end
return turn
`;
const CLOSED = 'x:';

const CLEAR = `
local cur = redis.call('GET', KEYS[1])
if cur and cjson.decode(cur).turn_id == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

/** Turn state in Redis with expiring keys, so every agent-runtime instance sees it. */
export class RedisTurnStateStore implements TurnStateStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'alfred:',
  ) {
    this.redis = createRedis(url, 'turn-state');
  }

  async setCurrent(scope: Scope, sessionId: string, turn: CurrentTurn, ttlMs: number): Promise<void> {
    await this.redis.set(this.k('turn', key(scope, sessionId)), JSON.stringify(turn), 'PX', Math.ceil(ttlMs));
  }

  async current(scope: Scope, sessionId: string): Promise<CurrentTurn | undefined> {
    const json = await this.redis.get(this.k('turn', key(scope, sessionId)));
    return json ? (JSON.parse(json) as CurrentTurn) : undefined;
  }

  async clearCurrent(scope: Scope, sessionId: string, turnId: string): Promise<void> {
    await this.redis.eval(CLEAR, 1, this.k('turn', key(scope, sessionId)), turnId);
  }

  async requestCancel(turnId: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.k('turn-cancel', turnId), '1', 'PX', Math.ceil(ttlMs));
  }

  async cancelRequested(turnId: string): Promise<boolean> {
    return (await this.redis.exists(this.k('turn-cancel', turnId))) === 1;
  }

  async openConfirmation(scope: Scope, sessionId: string, pending: PendingConfirmation, ttlMs: number): Promise<void> {
    const k = this.k('confirm', `${key(scope, sessionId)}:${pending.request_id}`);
    await this.redis.multi().hset(k, { turn_id: pending.turn_id, skill: pending.skill }).pexpire(k, Math.ceil(ttlMs)).exec();
  }

  async answer(scope: Scope, sessionId: string, requestId: string, approve: boolean): Promise<AnswerOutcome> {
    const k = this.k('confirm', `${key(scope, sessionId)}:${requestId}`);
    const res = (await this.redis.eval(ANSWER, 1, k, approve ? '1' : '0')) as string;
    if (res === '') return 'unknown';
    if (res.startsWith(`!${CLOSED}`)) return { closed: res.slice(1 + CLOSED.length) };
    if (res.startsWith('!')) return 'answered';
    return { turn_id: res };
  }

  async answerOf(scope: Scope, sessionId: string, requestId: string): Promise<boolean | undefined> {
    const v = await this.redis.hget(this.k('confirm', `${key(scope, sessionId)}:${requestId}`), 'answer');
    return v === null || v.startsWith(CLOSED) ? undefined : v === '1';
  }

  async closeConfirmation(scope: Scope, sessionId: string, requestId: string, reason: string): Promise<void> {
    await this.redis.eval(ANSWER, 1, this.k('confirm', `${key(scope, sessionId)}:${requestId}`), `${CLOSED}${reason}`);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  private k(kind: string, id: string): string {
    return `${this.prefix}${kind}:{${id}}`;
  }
}
