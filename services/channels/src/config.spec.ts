import { ConfigError } from '#config';
import { loadChannelsConfig } from './config.js';

const token = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw-';

describe(loadChannelsConfig.name, () => {
  it('should leave Telegram off and nobody allowed by default', () => {
    const config = loadChannelsConfig({});
    expect(config.TELEGRAM_BOT_TOKEN).toBeUndefined();
    expect(config.ALFRED_TELEGRAM_ALLOW).toBeUndefined();
    expect(config.ALFRED_TELEGRAM_TENANT).toBe('default');
  });

  it('should read the allowlist as agent:id,id pairs', () => {
    const config = loadChannelsConfig({ TELEGRAM_BOT_TOKEN: token, ALFRED_TELEGRAM_ALLOW: 'alfred:11,22; jarvis:22' });
    expect([...config.ALFRED_TELEGRAM_ALLOW!].map(([a, ids]) => [a, [...ids]])).toEqual([
      ['alfred', [11, 22]],
      ['jarvis', [22]],
    ]);
  });

  it('should reject a malformed allowlist and a malformed token without echoing the token', () => {
    const bad = 'not-a-token-but-a-secret-value';
    let error: unknown;
    try {
      loadChannelsConfig({ TELEGRAM_BOT_TOKEN: bad, ALFRED_TELEGRAM_ALLOW: 'alfred:abc' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/TELEGRAM_BOT_TOKEN/);
    expect(message).toMatch(/ALFRED_TELEGRAM_ALLOW/);
    expect(message).not.toContain(bad);
  });

  it('should refuse an http:// webhook URL, which Telegram never calls, and take an https:// one', () => {
    expect(() =>
      loadChannelsConfig({ TELEGRAM_BOT_TOKEN: token, ALFRED_TELEGRAM_WEBHOOK_URL: 'http://alfred.example.com' }),
    ).toThrow(/ALFRED_TELEGRAM_WEBHOOK_URL.*https:\/\/ URLs only/s);
    expect(() => loadChannelsConfig({ ALFRED_TELEGRAM_WEBHOOK_URL: 'ftp://alfred.example.com' })).toThrow(ConfigError);
    expect(
      loadChannelsConfig({ ALFRED_TELEGRAM_WEBHOOK_URL: 'https://alfred.example.com/base' })
        .ALFRED_TELEGRAM_WEBHOOK_URL,
    ).toBe('https://alfred.example.com/base');
  });
});
