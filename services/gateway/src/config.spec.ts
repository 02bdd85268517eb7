import { readFileSync } from 'node:fs';
import { ConfigError } from '#config';
import { loadGatewayConfig } from './config.js';

describe(loadGatewayConfig.name, () => {
  it('should default to loopback, port 8080, and no keys', () => {
    const cfg = loadGatewayConfig({});
    expect(cfg.ALFRED_API_HOST).toBe('127.0.0.1');
    expect(cfg.ALFRED_API_PORT).toBe(8080);
    expect(cfg.ALFRED_API_KEYS).toBeUndefined();
  });

  it('should refuse a non-loopback address without API keys', () => {
    expect(() => loadGatewayConfig({ ALFRED_API_HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ ALFRED_API_HOST: '0.0.0.0' })).toThrow(/ALFRED_API_KEYS/);
  });

  it('should accept a non-loopback address with keys, mapping each key to its tenant', () => {
    const cfg = loadGatewayConfig({
      ALFRED_API_HOST: '0.0.0.0',
      ALFRED_API_KEYS: 'k-aaaaaaaaaaaaaaaa=acme, k-bbbbbbbbbbbbbbbb',
    });
    expect([...cfg.ALFRED_API_KEYS!.entries()]).toEqual([
      ['k-aaaaaaaaaaaaaaaa', 'acme'],
      ['k-bbbbbbbbbbbbbbbb', 'default'],
    ]);
  });

  it('should refuse short keys', () => {
    expect(() => loadGatewayConfig({ ALFRED_API_KEYS: 'short' })).toThrow(/at least 16/);
  });

  it('should refuse the placeholder key .env.example ships with until it is changed', () => {
    const example = /^ALFRED_API_KEYS=(.*)$/m.exec(
      readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'),
    )![1]!;
    expect(() => loadGatewayConfig({ ALFRED_API_HOST: '0.0.0.0', ALFRED_API_KEYS: example })).toThrow(
      /placeholder from \.env\.example/,
    );
  });
});
