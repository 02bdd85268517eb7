import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { gatewayEnvSchema } from '../services/gateway/src/config.js';
import { ALL_SERVICES } from '../services/all-services.js';

/** docker-compose.yml cannot run here; this keeps it consistent with the code it deploys. */
describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8'), { merge: true });
  const envExample = Object.fromEntries(
    readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const serviceNames = ['gateway', ...ALL_SERVICES.map((s) => s.name)];
  const schemaKeys = (name: string): string[] => {
    if (name === 'gateway') return Object.keys(gatewayEnvSchema.shape);
    return Object.keys(ALL_SERVICES.find((s) => s.name === name)!.envSchema.shape);
  };

  it('should define infrastructure with durable settings', () => {
    expect(compose.services.nats.command).toEqual(expect.arrayContaining(['-js']));
    expect(compose.configs.nats_conf.content).toMatch(/sync_interval:\s*always/);
    expect(compose.services.redis.command.join(' ')).toMatch(/--appendonly yes/);
    expect(compose.services.redis.command.join(' ')).toMatch(/--appendfsync everysec/);
    expect(compose.services.qdrant).toBeDefined();
  });

  it('should run every service with a health check and a built entry point', () => {
    for (const name of serviceNames) {
      const svc = compose.services[name];
      expect(svc).toBeDefined();
      expect(svc.command.join(' ')).toBe(`node dist/services/${name}/src/main.js`);
      expect(svc.healthcheck ?? compose['x-service'].healthcheck).toBeDefined();
      expect(svc.environment.NATS_URL).toBe('nats://nats:4222');
    }
  });

  it('should set only variables the services read', () => {
    for (const name of serviceNames) {
      const known = new Set(schemaKeys(name));
      for (const key of Object.keys(compose.services[name].environment)) {
        expect(`${name}:${key}:${known.has(key)}`).toBe(`${name}:${key}:true`);
      }
    }
  });

  it('should give every .env.example variable to a service that reads it', () => {
    const all = new Set(serviceNames.flatMap(schemaKeys));
    for (const key of Object.keys(envExample)) expect(`${key}:${all.has(key)}`).toBe(`${key}:true`);
  });

  it('should require API keys for the gateway, which binds to all interfaces', () => {
    expect(compose.services.gateway.environment.ALFRED_API_HOST).toBe('0.0.0.0');
    expect(envExample.ALFRED_API_KEYS).toMatch(/=/);
    expect(compose.services.gateway.ports).toEqual(['8080:8080']);
  });

  it('should grant what bubblewrap needs only to the services that run untrusted code, saying why', () => {
    const text = readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8');
    for (const name of serviceNames) {
      const svc = compose.services[name];
      const sandboxed = name === 'skill-runner' || name === 'agent-runtime';
      expect(`${name}:${JSON.stringify(svc.cap_add ?? [])}`).toBe(`${name}:${sandboxed ? '["SYS_ADMIN"]' : '[]'}`);
      if (sandboxed) expect(svc.security_opt).toEqual(['seccomp=unconfined', 'apparmor=unconfined', 'systempaths=unconfined']);
    }
    expect(text).toMatch(/bubblewrap[\s\S]*forbid creating those namespaces/);
    expect(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')).toMatch(/apt-get install[^\n]*bubblewrap/);
  });
});
