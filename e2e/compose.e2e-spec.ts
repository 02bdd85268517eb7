import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { gatewayEnvSchema } from '../services/gateway/src/config.js';
import { ALL_SERVICES } from '../services/all-services.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** A variable's value in compose: `${NAME:-default}` gives the default, a literal itself. */
const composeDefault = (value: unknown) => String(value).replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1');

/** The value of a NATS config key (`max_payload: 8MB`) in bytes. */
function natsBytes(conf: string, key: string): number {
  const m = new RegExp(`^${key}:\\s*(\\d+)\\s*(KB|MB)?\\s*$`, 'mi').exec(conf);
  if (!m) throw new Error(`${key} is not set`);
  return Number(m[1]) * (m[2]?.toUpperCase() === 'MB' ? 1024 * 1024 : m[2] ? 1024 : 1);
}

/**
 * docker-compose.yml read as an operator would: docker/compose-e2e.sh runs it for real where an engine can start;
 * this keeps it consistent with the code it deploys on every `npm test`.
 */
describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const dockerfile = read('Dockerfile');
  const envExample = Object.fromEntries(
    read('.env.example')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const services = compose.services as Record<string, Record<string, any>>;
  /** Containers of Alfred's image, by compose name, with the service each runs. */
  const alfred = Object.entries(services)
    .filter(([, s]) => /^node dist\/services\/([a-z-]+)\/src\/main\.js$/.test((s.command ?? []).join(' ')))
    .map(([name, s]) => ({ name, svc: s, service: /dist\/services\/([a-z-]+)\//.exec(s.command.join(' '))![1]! }));
  const schemaKeys = (service: string): string[] => {
    if (service === 'gateway') return Object.keys(gatewayEnvSchema.shape);
    return Object.keys(ALL_SERVICES.find((s) => s.name === service)!.envSchema.shape);
  };
  const natsConfs = ['docker/nats/nats.conf', 'docker/nats/nats-2.9.conf', 'docker/nats/cluster.conf'].map(read);

  it('should run every service of the code, each in the image, with a health check and NATS', () => {
    const deployed = new Set(alfred.map((a) => a.service));
    expect([...deployed].sort()).toEqual(['gateway', ...ALL_SERVICES.map((s) => s.name)].sort());
    for (const { name, svc } of alfred) {
      expect(`${name}: ${svc.healthcheck?.test?.join(' ')}`).toMatch(/curl -fsS .*http:\/\/127\.0\.0\.1:9000\/ready/);
      expect(svc.environment.NATS_URL).toBe('${ALFRED_NATS_URL:-nats://nats:4222}');
      expect(svc.environment.ALFRED_STREAM_REPLICAS).toBe('${ALFRED_STREAM_REPLICAS:-1}');
      expect(svc.environment.ALFRED_HEALTH_PORT).toBe('9000');
    }
  });

  it('should define infrastructure with durable settings', () => {
    for (const conf of [natsConfs[0], natsConfs[2]]) expect(conf).toMatch(/sync_interval:\s*always/);
    for (const conf of natsConfs) expect(conf).toMatch(/jetstream\s*\{[^}]*store_dir:\s*\/data/);
    expect(services.nats!.volumes).toContain('${ALFRED_NATS_CONF:-./docker/nats/nats.conf}:/etc/nats/nats.conf:ro');
    expect(services.redis!.command.join(' ')).toMatch(/--appendonly yes --appendfsync everysec/);
    expect(services.qdrant!.profiles).toEqual(['qdrant']);
  });

  it('should make NATS a three-node JetStream cluster in the ha profile, every node routed to every other', () => {
    const cluster = natsConfs[2]!;
    const nodes = ['nats', 'nats-2', 'nats-3'];
    const routes = [...cluster.matchAll(/nats-route:\/\/([a-z0-9-]+):6222/g)].map((m) => m[1]);
    expect(routes.sort()).toEqual(nodes);
    expect(cluster).toMatch(/^server_name:\s*\$NATS_SERVER_NAME$/m);
    const names = nodes.map((n) => services[n]!.environment.NATS_SERVER_NAME);
    expect(new Set(names).size).toBe(3);
    for (const n of ['nats-2', 'nats-3']) {
      expect(services[n]!.profiles).toEqual(['ha']);
      expect(services[n]!.volumes).toEqual([`${n}-data:/data`, './docker/nats/cluster.conf:/etc/nats/nats.conf:ro']);
      expect(services[n]!.command).toEqual(services.nats!.command);
    }
  });

  it('should give every container a restart policy, and services a grace period longer than their shutdown deadline', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect(`${name}: ${svc.restart}`).toMatch(svc.profiles?.includes('tools') ? /: no$/ : /: unless-stopped$/);
    }
    for (const { name, svc } of alfred) {
      const grace = Number(/^(\d+)s$/.exec(svc.stop_grace_period)![1]) * 1000;
      expect(`${name}: ${grace > Number(svc.environment.ALFRED_SHUTDOWN_DEADLINE_MS) + 5000}`).toBe(`${name}: true`);
    }
  });

  it('should hand each service only the variables, and so the secrets, it reads', () => {
    for (const { name, svc, service } of alfred) {
      expect(svc.env_file).toBeUndefined();
      const known = new Set(schemaKeys(service));
      for (const key of Object.keys(svc.environment)) expect(`${name}:${key}:${known.has(key)}`).toBe(`${name}:${key}:true`);
    }
    const holders = (key: string) => alfred.filter((a) => key in a.svc.environment).map((a) => a.service);
    expect(new Set(holders('ANTHROPIC_API_KEY'))).toEqual(new Set(['agent-runtime', 'compactor', 'distiller', 'learner']));
    expect(holders('ALFRED_API_KEYS')).toEqual(['gateway']);
    expect(holders('ALFRED_SKILL_SECRETS')).toEqual(['skill-runner']);
    expect(new Set(holders('ALFRED_EMBEDDINGS_API_KEY'))).toEqual(new Set(['memory', 'skill-registry']));
  });

  it('should give every .env.example variable to a service that reads it', () => {
    const all = new Set(alfred.flatMap((a) => schemaKeys(a.service)));
    for (const key of Object.keys(envExample).filter((k) => !k.startsWith('COMPOSE_'))) expect(`${key}:${all.has(key)}`).toBe(`${key}:true`);
    expect(envExample.COMPOSE_PROFILES).toBe('qdrant');
  });

  it('should refuse to start without API keys and publish the API on loopback by default', () => {
    expect(services.gateway!.environment.ALFRED_API_HOST).toBe('0.0.0.0');
    expect(services.gateway!.environment.ALFRED_API_KEYS).toMatch(/^\$\{ALFRED_API_KEYS:\?/);
    for (const [name, svc] of Object.entries(services)) {
      for (const port of svc.ports ?? []) expect(`${name}: ${port}`).toMatch(/: (\$\{ALFRED_PUBLISH_HOST:-)?127\.0\.0\.1\}?:/);
    }
  });

  it('should create every volume mount point in the image, owned by the user the services run as', () => {
    const mkdir = /RUN mkdir -p ([^&]+)&& chown -R node:node \/data/.exec(dockerfile.replace(/\\\n\s*/g, ''));
    expect(mkdir).not.toBeNull();
    const created = mkdir![1]!.trim().split(/\s+/);
    expect(dockerfile).toMatch(/^USER node$/m);
    for (const { name, svc } of alfred) {
      for (const volume of svc.volumes ?? []) {
        const target = String(volume).split(':')[1]!;
        expect(`${name}: ${target} ${created.some((c) => c === target || c.startsWith(`${target}/`))}`).toBe(`${name}: ${target} true`);
      }
    }
  });

  it('should install curl in the image, which every bundled skill calls the API with', () => {
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends[^\n]*\bcurl\b/);
  });

  it('should share one workspace volume between agent-runtime replicas', () => {
    const agents = services['agent-runtime']!;
    expect(agents.deploy.replicas).toBeGreaterThan(1);
    expect(agents.volumes).toContain('workspaces:/data/workspaces');
    expect(agents.environment.ALFRED_DATA_DIR).toBe('/data');
  });

  it('should run one memory instance on the embedded store, in its own volume', () => {
    const lance = services['memory-lancedb']!;
    expect(lance.profiles).toEqual(['lancedb']);
    expect(lance.deploy?.replicas ?? 1).toBe(1);
    expect(lance.environment.QDRANT_URL).toBeUndefined();
    expect(lance.volumes).toContain('memory-data:/data');
    expect(services.memory!.environment.QDRANT_URL).toBe('http://qdrant:6333');
  });

  it('should mount the models volume read-only for the services and writable for models-pull', () => {
    for (const { name, svc } of alfred) {
      for (const v of (svc.volumes ?? []).filter((x: string) => x.startsWith('models:'))) expect(`${name} ${v}`).toBe(`${name} models:/data/models:ro`);
    }
    expect(services['models-pull']!.volumes).toEqual(['models:/data/models']);
    expect(services['models-pull']!.command.join(' ')).toBe('node bin/alfred.js models pull');
  });

  it('should let NATS carry the largest message the services accept or send', () => {
    const maxPayloads = natsConfs.map((c) => natsBytes(c, 'max_payload'));
    expect(new Set(maxPayloads).size).toBe(1);
    const bodyLimit = Number(composeDefault(services.gateway!.environment.ALFRED_BODY_LIMIT_BYTES));
    // A request crosses the bus as its body plus scope and envelope; replies (lists, sessions) may be larger.
    expect(maxPayloads[0]!).toBeGreaterThanOrEqual(4 * bodyLimit);
  });

  it('should grant what bubblewrap needs only to the services that run untrusted code, saying why', () => {
    const sandboxed = new Set(alfred.filter((a) => a.service === 'skill-runner' || a.service === 'agent-runtime').map((a) => a.name));
    expect(sandboxed.size).toBeGreaterThanOrEqual(2);
    for (const [name, svc] of Object.entries(services)) {
      expect(`${name}:${svc.privileged === true}`).toBe(`${name}:${sandboxed.has(name)}`);
      // No other grant: Compose passes security options to the engine, which refuses the CLI-only `systempaths`.
      expect(`${name}:${JSON.stringify(svc.cap_add ?? [])}:${JSON.stringify(svc.security_opt ?? [])}`).toBe(`${name}:[]:[]`);
    }
    expect(read('docker-compose.yml')).toMatch(/bubblewrap[\s\S]*forbid creating those namespaces/);
    expect(dockerfile).toMatch(/apt-get install[^\n]*bubblewrap/);
  });
});
