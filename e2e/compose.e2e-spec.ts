import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { TEST_IMAGES } from '../libs/testing/src/test-dependencies.js';
import { BUBBLEWRAP_CALLS } from '../docker/seccomp/sandbox-profile.mjs';
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

  it('should give every container a restart policy, and services a grace period past their shutdown deadline', () => {
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
      for (const key of Object.keys(svc.environment))
        expect(`${name}:${key}:${known.has(key)}`).toBe(`${name}:${key}:true`);
    }
    const holders = (key: string) => alfred.filter((a) => key in a.svc.environment).map((a) => a.service);
    expect(new Set(holders('ANTHROPIC_API_KEY'))).toEqual(
      new Set(['agent-runtime', 'compactor', 'distiller', 'learner']),
    );
    expect(holders('ALFRED_API_KEYS')).toEqual(['gateway']);
    expect(holders('ALFRED_SKILL_SECRETS')).toEqual(['skill-runner']);
    expect(new Set(holders('ALFRED_EMBEDDINGS_API_KEY'))).toEqual(new Set(['memory', 'skill-registry']));
  });

  it('should give every .env.example variable to a service that reads it', () => {
    const all = new Set(alfred.flatMap((a) => schemaKeys(a.service)));
    for (const key of Object.keys(envExample).filter((k) => !k.startsWith('COMPOSE_')))
      expect(`${key}:${all.has(key)}`).toBe(`${key}:true`);
    expect(envExample.COMPOSE_PROFILES).toBe('qdrant');
  });

  it('should refuse to start without API keys and publish the API on loopback by default', () => {
    expect(services.gateway!.environment.ALFRED_API_HOST).toBe('0.0.0.0');
    expect(services.gateway!.environment.ALFRED_API_KEYS).toMatch(/^\$\{ALFRED_API_KEYS:\?/);
    for (const [name, svc] of Object.entries(services)) {
      for (const port of svc.ports ?? [])
        expect(`${name}: ${port}`).toMatch(/: (\$\{ALFRED_PUBLISH_HOST:-)?127\.0\.0\.1\}?:/);
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
        expect(`${name}: ${target} ${created.some((c) => c === target || c.startsWith(`${target}/`))}`).toBe(
          `${name}: ${target} true`,
        );
      }
    }
  });

  it('should install curl in the image, which every bundled skill calls the API with', () => {
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends[^\n]*\bcurl\b/);
  });

  it('should give git and ssh to the skill-registry alone, in an image of its own on the services one', () => {
    const stages = dockerfile.split(/^FROM /m).slice(1);
    const stage = (name: string) => stages.find((st) => st.split('\n')[0]!.endsWith(` AS ${name}`)) ?? '';
    expect(stage('service')).not.toMatch(/apt-get install[^\n]*\bgit\b/);
    expect(stage('skill-registry')).toMatch(/^service AS skill-registry/);
    expect(stage('skill-registry')).toMatch(/apt-get install[^\n]*\bgit openssh-client\b/);
    for (const [name, svc] of Object.entries(services)) {
      const target = (svc as { build?: { target?: string } }).build?.target;
      if (target === undefined) continue;
      expect(`${name}:${target}`).toBe(`${name}:${name.startsWith('skill-registry') ? 'skill-registry' : 'service'}`);
    }
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
      for (const v of (svc.volumes ?? []).filter((x: string) => x.startsWith('models:')))
        expect(`${name} ${v}`).toBe(`${name} models:/data/models:ro`);
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

  it('should run nothing privileged, and grant what bubblewrap needs only where untrusted code runs', () => {
    const sandboxed = alfred.filter((a) => ['skill-runner', 'agent-runtime'].includes(a.service)).map((a) => a.name);
    expect(sandboxed.sort()).toEqual(['agent-runtime', 'skill-runner']);
    for (const [name, svc] of Object.entries(services)) {
      expect(`${name}: privileged ${svc.privileged === true}`).toBe(`${name}: privileged false`);
      if (sandboxed.includes(name)) continue;
      expect(`${name}: ${JSON.stringify([svc.cap_add, svc.user, svc.entrypoint])}`).toBe(`${name}: [null,null,null]`);
      for (const opt of svc.security_opt ?? []) expect(`${name}: ${opt}`).toBe(`${name}: no-new-privileges:true`);
    }
    for (const name of sandboxed) {
      const svc = services[name]!;
      expect([svc.user, svc.entrypoint, svc.cap_drop, svc.cap_add]).toEqual([
        'root',
        ['alfred-sandbox-entrypoint'],
        ['ALL'],
        ['SYS_ADMIN', 'SETUID', 'SETGID', 'SETPCAP'],
      ]);
      expect(svc.security_opt).toEqual([
        'seccomp=./docker/seccomp/sandbox.json',
        'apparmor=unconfined',
        'no-new-privileges:true',
      ]);
    }
    // Every Alfred service: no setuid gains.
    for (const { name, svc } of alfred) {
      expect(`${name}: ${svc.security_opt.includes('no-new-privileges:true')}`).toBe(`${name}: true`);
    }
    // Each grant says why, next to it.
    const file = read('docker-compose.yml');
    for (const why of [/SYS_ADMIN: the two mounts/, /SETPCAP: emptying the bounding set/, /seccomp profile refuses/]) {
      expect(file).toMatch(why);
    }
    expect(file).toMatch(/AppArmor[^\n]*denies every mount/);
    expect(dockerfile).toMatch(/apt-get install[^\n]*bubblewrap/);
    expect(dockerfile).toMatch(/^COPY docker\/sandbox-entrypoint\.sh \/usr\/local\/bin\/alfred-sandbox-entrypoint$/m);
  });

  it('should start the sandboxed services as `node` with no capability left and no way to gain one', () => {
    const entrypoint = read('docker/sandbox-entrypoint.sh');
    const exec = entrypoint.split('\n').filter((l) => /^exec /.test(l));
    expect(exec).toEqual([
      'exec setpriv --reuid=node --regid=node --init-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"',
    ]);
    // Root does nothing but the two mounts, and fails closed (set -e) if one fails.
    const commands = entrypoint.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(commands[0]).toBe('set -eu');
    const mounts = commands.flatMap((l) => [...l.matchAll(/(?:^|\|\| )(mount [^|]+)/g)].map((m) => m[1]!));
    const kinds = mounts.map((m) => m.split(' ').slice(0, 3).join(' '));
    expect(kinds).toEqual(['mount -t proc', 'mount --bind /run/alfred/proc/sys/user']);
  });

  it("should ship a seccomp profile that is Docker's default plus only the calls bubblewrap needs", () => {
    type Caps = { caps?: string[]; arches?: string[] };
    type Rule = { names: string[]; action: string; errnoRet?: number; includes?: Caps; excludes?: Caps };
    const profile = JSON.parse(read('docker/seccomp/sandbox.json')) as { defaultAction: string; syscalls: Rule[] };
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    // The container holds SYS_ADMIN (for the entrypoint): nothing may be granted or withheld on that account.
    for (const rule of profile.syscalls) {
      const caps = [...(rule.includes?.caps ?? []), ...(rule.excludes?.caps ?? [])];
      expect(`${rule.names}: ${caps}`).not.toMatch(/SYS_ADMIN/);
    }
    const unconditional = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.includes?.caps?.length);
    const allowed = new Set(unconditional.flatMap((r) => r.names));
    const forBubblewrap = profile.syscalls.filter((r) => /bubblewrap/.test(JSON.stringify(r)));
    expect(forBubblewrap.map((r) => r.names)).toEqual([BUBBLEWRAP_CALLS]);
    for (const call of BUBBLEWRAP_CALLS) expect(`${call} ${allowed.has(call)}`).toBe(`${call} true`);
    // What Docker grants a SYS_ADMIN container beyond that stays refused.
    const adminOnly = ['bpf', 'perf_event_open', 'setns', 'fanotify_init', 'open_tree', 'move_mount', 'fsopen'];
    for (const call of [...adminOnly, 'fsmount', 'syslog', 'quotactl', 'lookup_dcookie', 'name_to_handle_at']) {
      expect(`${call} ${allowed.has(call)}`).toBe(`${call} false`);
    }
    // clone3 keeps Docker's ENOSYS, so glibc falls back to clone (whose namespace flags the kernel then judges).
    const clone3 = profile.syscalls.find((r) => r.names.includes('clone3') && !r.includes?.arches);
    expect(clone3?.action).toBe('SCMP_ACT_ERRNO');
    expect(clone3?.errnoRet).toBe(38);
    // Common calls of the default stay allowed.
    for (const call of ['read', 'write', 'openat', 'execve', 'futex', 'epoll_wait']) {
      expect(`${call} ${allowed.has(call)}`).toBe(`${call} true`);
    }
  });

  it('should give every health check time to answer on a saturated host', () => {
    const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)?.[1] ?? NaN);
    for (const [name, svc] of Object.entries(services)) {
      if (!svc.healthcheck || svc.healthcheck.disable) continue;
      expect(`${name}: ${seconds(svc.healthcheck.timeout) >= 10}`).toBe(`${name}: true`);
      // Unhealthy only after a minute of failures in a row.
      expect(`${name}: ${seconds(svc.healthcheck.interval) * svc.healthcheck.retries >= 60}`).toBe(`${name}: true`);
    }
  });

  it('should have Prometheus scrape every Alfred service, Qdrant, and NATS and Redis through exporters', () => {
    type Job = {
      job_name: string;
      dns_sd_configs?: Array<{ names: string[]; port: number }>;
      static_configs?: Array<{ targets: string[] }>;
    };
    const prometheus = parse(read('docker/prometheus/prometheus.yml')) as { scrape_configs: Job[] };
    const job = (name: string) => prometheus.scrape_configs.find((j) => j.job_name === name)!;
    const [alfredDns] = job('alfred').dns_sd_configs!;
    expect(alfredDns!.names.sort()).toEqual(alfred.map((a) => a.name).sort());
    expect(alfredDns!.port).toBe(Number(alfred[0]!.svc.environment.ALFRED_HEALTH_PORT));
    expect(job('qdrant').dns_sd_configs![0]).toMatchObject({ names: ['qdrant'], port: 6333 });
    const natsExporter = services['nats-exporter']!;
    const redisExporter = services['redis-exporter']!;
    const exporterPort = natsExporter.environment.ALFRED_NATS_EXPORTER_PORT;
    expect(job('nats').static_configs![0]!.targets).toEqual([`nats-exporter:${exporterPort}`]);
    expect(job('redis').static_configs![0]!.targets).toEqual(['redis-exporter:9121']);
    expect([natsExporter.profiles, redisExporter.profiles]).toEqual([['metrics'], ['metrics']]);
    // The exporter reads every server the services use, on the port NATS serves monitoring on.
    expect(natsExporter.environment.NATS_URL).toBe(alfred[0]!.svc.environment.NATS_URL);
    expect(natsExporter.command).toEqual(['node', 'docker/nats-exporter.mjs']);
    const monitorPort = natsExporter.environment.ALFRED_NATS_MONITOR_PORT;
    expect(services.nats!.command).toEqual(expect.arrayContaining(['--http_port', monitorPort]));
    const redisUser = alfred.find((a) => a.service === 'agent-runtime')!;
    expect(redisExporter.environment.REDIS_ADDR).toBe(redisUser.svc.environment.REDIS_URL);
  });

  it('should run the test suites on the images it deploys (testcontainers)', () => {
    expect(TEST_IMAGES.qdrant).toBe(services.qdrant!.image);
    expect(TEST_IMAGES.nats).toBe(composeDefault(services.nats!.image));
    expect(TEST_IMAGES.redis).toBe(composeDefault(services.redis!.image));
  });
});
