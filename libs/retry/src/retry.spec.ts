import { jest } from '@jest/globals';
import { retry } from './retry.js';
import { sleep } from './sleep.js';

/** Work that fails with the given errors in turn, then answers `done`; records the try numbers it was given. */
function flaky(failures: unknown[]) {
  const tries: number[] = [];
  const work = async (attempt: number) => {
    tries.push(attempt);
    if (failures.length > 0) throw failures.shift();
    return 'done';
  };
  return { tries, work };
}

describe(retry.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('should try again at once without a backoff, until the work succeeds', async () => {
    const { tries, work } = flaky([new Error('a'), new Error('b')]);
    await expect(retry(work, { attempts: 3 })).resolves.toBe('done');
    expect(tries).toEqual([1, 2, 3]);
  });

  it('should throw the last failure once the attempts are spent', async () => {
    const { tries, work } = flaky([new Error('a'), new Error('b'), new Error('c')]);
    await expect(retry(work, { attempts: 2 })).rejects.toThrow('b');
    expect(tries).toEqual([1, 2]);
  });

  it('should throw a failure that is not worth retrying at once', async () => {
    const permanent = new Error('permanent');
    const { tries, work } = flaky([permanent]);
    await expect(retry(work, { attempts: 5, retryIf: (err) => err !== permanent })).rejects.toBe(permanent);
    expect(tries).toEqual([1]);
  });

  it('should wait the backoff between tries, and what a failure names instead when it names a wait', async () => {
    const waits: number[] = [];
    const named = Object.assign(new Error('busy'), { retryAfterMs: 7_000 });
    const { tries, work } = flaky([new Error('a'), named]);
    const done = retry(work, {
      attempts: 3,
      backoff: { baseMs: 1_000, maxMs: 1_000 },
      waitFor: (err) => (err as { retryAfterMs?: number }).retryAfterMs,
      onRetry: (_err, _attempt, delayMs) => waits.push(delayMs),
    });
    await jest.advanceTimersByTimeAsync(999);
    expect(tries.length).toBeLessThanOrEqual(2);
    await jest.advanceTimersByTimeAsync(8_000);
    await expect(done).resolves.toBe('done');
    expect(waits[0]).toBeGreaterThanOrEqual(500);
    expect(waits[0]).toBeLessThanOrEqual(1_000);
    expect(waits[1]).toBe(7_000);
    expect(tries).toEqual([1, 2, 3]);
  });

  it('should stop waiting when the signal aborts, throwing the last failure without another try', async () => {
    const aborter = new AbortController();
    const { tries, work } = flaky([new Error('away'), new Error('away')]);
    const done = retry(work, { attempts: Infinity, backoff: { baseMs: 60_000 }, signal: aborter.signal });
    await jest.advanceTimersByTimeAsync(0);
    aborter.abort();
    await expect(done).rejects.toThrow('away');
    expect(tries).toEqual([1]);
  });
});

describe(sleep.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('should resolve after the time, or at once when its signal aborts', async () => {
    let slept = false;
    void sleep(1_000).then(() => (slept = true));
    await jest.advanceTimersByTimeAsync(999);
    expect(slept).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(slept).toBe(true);

    const aborter = new AbortController();
    let woke = false;
    void sleep(60_000, aborter.signal).then(() => (woke = true));
    aborter.abort();
    await jest.advanceTimersByTimeAsync(0);
    expect(woke).toBe(true);
  });
});
