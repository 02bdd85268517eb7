import { RepeatedLog } from './repeated-log.js';
import type { Logger } from './logger.js';

function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    void lines.push({ level, fields, msg });
  return { lines, logger: { warn: at('warn'), info: at('info') } as unknown as Logger };
}

describe(RepeatedLog.name, () => {
  it('should log the first of a kind whole, then one summary per period while it repeats, then that it stopped', () => {
    const { lines, logger } = recorder();
    const log = new RepeatedLog(logger, { summaryEveryMs: 60_000, now: () => 0 });
    for (let i = 0; i < 1_036; i++)
      log.warn('SERVICE_UNAVAILABLE NATS', { route: '/memories', n: i }, 'NATS is unavailable');
    expect(lines).toEqual([
      {
        level: 'warn',
        fields: { route: '/memories', n: 0, repeated: 'SERVICE_UNAVAILABLE NATS', state: 'started' },
        msg: 'NATS is unavailable',
      },
    ]);

    log.summarize();
    expect(lines[1]).toMatchObject({
      level: 'warn',
      fields: { state: 'ongoing', count: 1_035, total: 1_036 },
      msg: '1035 more in the last 60 s: NATS is unavailable',
    });
    log.summarize();
    expect(lines[2]).toMatchObject({ level: 'info', fields: { state: 'stopped', total: 1_036 } });
    expect(lines).toHaveLength(3);

    // A new outage starts a new run.
    log.warn('SERVICE_UNAVAILABLE NATS', {}, 'NATS is unavailable');
    expect(lines[3]).toMatchObject({ fields: { state: 'started' } });
  });

  it('should keep kinds apart', () => {
    const { lines, logger } = recorder();
    const log = new RepeatedLog(logger);
    log.warn('a', {}, 'A away');
    log.warn('b', {}, 'B away');
    log.warn('a', {}, 'A away');
    expect(lines.map((l) => l.msg)).toEqual(['A away', 'B away']);
    log.summarize();
    expect(lines.slice(2).map((l) => l.fields.state)).toEqual(['ongoing', 'stopped']);
    log.summarize();
  });
});
