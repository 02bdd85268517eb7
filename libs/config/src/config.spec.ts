import { z } from 'zod';
import { baseEnv, ConfigError, parseEnv } from './config.js';

describe(parseEnv.name, () => {
  const schema = z.object({ ...baseEnv, PORT: z.coerce.number().int().max(10) });

  it('should apply defaults and coerce values', () => {
    const cfg = parseEnv(schema, { PORT: '7' });
    expect(cfg.PORT).toBe(7);
    expect(cfg.ALFRED_DATA_DIR).toBe('./.alfred/data');
    expect(cfg.NATS_URL).toBeUndefined();
  });

  it('should treat empty variables as unset', () => {
    expect(parseEnv(schema, { PORT: '1', NATS_URL: '' }).NATS_URL).toBeUndefined();
  });

  it("should read NATS_URL as the list of a cluster's servers", () => {
    const cfg = parseEnv(schema, { PORT: '1', NATS_URL: 'nats://a:4222, nats://b:4222,nats://c:4222' });
    expect(cfg.NATS_URL).toEqual(['nats://a:4222', 'nats://b:4222', 'nats://c:4222']);
    expect(cfg.ALFRED_STREAM_REPLICAS).toBe(1);
    expect(
      parseEnv(schema, { PORT: '1', NATS_URL: 'nats://a:4222', ALFRED_STREAM_REPLICAS: '3' }).ALFRED_STREAM_REPLICAS,
    ).toBe(3);
  });

  it('should refuse a server list with a bad entry, and a replica count NATS cannot hold', () => {
    expect(() => parseEnv(schema, { PORT: '1', NATS_URL: 'nats://a:4222,http://b' })).toThrow(/NATS_URL/);
    expect(() => parseEnv(schema, { PORT: '1', NATS_URL: ',' })).toThrow(/NATS_URL/);
    expect(() => parseEnv(schema, { PORT: '1', ALFRED_STREAM_REPLICAS: '0' })).toThrow(/ALFRED_STREAM_REPLICAS/);
    expect(() => parseEnv(schema, { PORT: '1', ALFRED_STREAM_REPLICAS: '7' })).toThrow(/ALFRED_STREAM_REPLICAS/);
  });

  it('should list every bad variable at once', () => {
    let error: unknown;
    try {
      parseEnv(schema, { PORT: '99', NATS_URL: 'http://x', ALFRED_LOG_LEVEL: 'loud' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/NATS_URL/);
    expect(problems).toMatch(/ALFRED_LOG_LEVEL/);
  });
});
