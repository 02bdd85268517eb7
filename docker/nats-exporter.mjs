#!/usr/bin/env node
// NATS' own monitoring endpoint (/varz, /jsz, /healthz: JSON) in the form Prometheus reads, for the `metrics`
// profile of docker-compose.yml. Debian packages no NATS exporter, so the stack runs this one everywhere (the
// official image and Debian's NATS alike) instead of a second, untested path. No dependencies: Node's http and fetch.
//   NATS_URL                     the servers, as the services get them (nats://nats:4222 or the `ha` node list);
//                                each is read on its monitoring port
//   ALFRED_NATS_MONITOR_PORT     that port (8222, docker-compose.yml starts NATS with --http_port 8222)
//   ALFRED_NATS_EXPORTER_PORT    where /metrics is served (7777)
// Each scrape reads every server at once, with a timeout, so one server down shows as nats_up 0, not a failed scrape.
import { createServer } from 'node:http';

const TIMEOUT_MS = 3_000;

/** [name, type, help, value from /varz or /jsz] — names follow Prometheus' conventions (promtool-clean). */
const VARZ = [
  ['nats_connections', 'gauge', 'Client connections open', (v) => v.connections],
  ['nats_connections_opened_total', 'counter', 'Client connections accepted since start', (v) => v.total_connections],
  ['nats_subscriptions', 'gauge', 'Subscriptions', (v) => v.subscriptions],
  ['nats_slow_consumers_total', 'counter', 'Clients dropped for not reading fast enough', (v) => v.slow_consumers],
  ['nats_received_messages_total', 'counter', 'Messages received from clients', (v) => v.in_msgs],
  ['nats_sent_messages_total', 'counter', 'Messages sent to clients', (v) => v.out_msgs],
  ['nats_received_bytes_total', 'counter', 'Payload bytes received from clients', (v) => v.in_bytes],
  ['nats_sent_bytes_total', 'counter', 'Payload bytes sent to clients', (v) => v.out_bytes],
  ['nats_routes', 'gauge', 'Cluster routes to other servers', (v) => v.routes],
  ['nats_resident_memory_bytes', 'gauge', 'Resident memory of the server process', (v) => v.mem],
  ['nats_start_time_seconds', 'gauge', 'When the server started (Unix time)', (v) => Date.parse(v.start) / 1000],
];
const JSZ = [
  ['nats_jetstream_streams', 'gauge', 'JetStream streams', (j) => j.streams],
  ['nats_jetstream_consumers', 'gauge', 'JetStream consumers', (j) => j.consumers],
  ['nats_jetstream_messages', 'gauge', 'Messages stored in JetStream streams', (j) => j.messages],
  ['nats_jetstream_stored_bytes', 'gauge', 'Bytes stored in JetStream streams', (j) => j.bytes],
  ['nats_jetstream_memory_used_bytes', 'gauge', 'JetStream memory storage in use', (j) => j.memory],
  ['nats_jetstream_file_used_bytes', 'gauge', 'JetStream file storage in use', (j) => j.storage],
  ['nats_jetstream_memory_limit_bytes', 'gauge', 'JetStream memory storage limit', (j) => j.config?.max_memory],
  ['nats_jetstream_file_limit_bytes', 'gauge', 'JetStream file storage limit', (j) => j.config?.max_storage],
  ['nats_jetstream_api_requests_total', 'counter', 'JetStream API requests', (j) => j.api?.total],
  ['nats_jetstream_api_errors_total', 'counter', 'JetStream API requests that failed', (j) => j.api?.errors],
];

/** The configuration, read once: monitoring URLs of every server and the port to serve on. */
export function exporterConfig(env) {
  const port = (name, fallback) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0 || value > 65535) {
      throw new Error(`${name} must be a TCP port, got "${env[name]}"`);
    }
    return value;
  };
  const monitorPort = port('ALFRED_NATS_MONITOR_PORT', 8222);
  const servers = (env.NATS_URL ?? 'nats://127.0.0.1:4222')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const monitors = servers.map((server) => {
    const url = new URL(server.includes('://') ? server : `nats://${server}`);
    return { server: `${url.hostname}:${url.port || 4222}`, url: `http://${url.hostname}:${monitorPort}` };
  });
  return { monitors, port: port('ALFRED_NATS_EXPORTER_PORT', 7777), host: env.ALFRED_NATS_EXPORTER_HOST ?? '0.0.0.0' };
}

async function getJson(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

/** One server's state: its /varz, /jsz and health, or why it could not be read. */
async function readServer({ server, url }) {
  try {
    const [varz, jsz, health] = await Promise.all([
      getJson(`${url}/varz`),
      getJson(`${url}/jsz`).catch(() => undefined),
      fetch(`${url}/healthz?js-enabled-only=true`, { signal: AbortSignal.timeout(TIMEOUT_MS) }).then(
        (r) => r.ok,
        () => false,
      ),
    ]);
    return { server, varz, jsz, healthy: health };
  } catch (err) {
    return { server, error: err instanceof Error ? err.message : String(err) };
  }
}

const escapeLabel = (value) => String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (pairs) =>
  `{${Object.entries(pairs)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',')}}`;

/** The Prometheus text exposition of every server's state. */
export function render(states) {
  const out = [];
  const family = (name, type, help, rows) => {
    const present = rows.filter(([, value]) => typeof value === 'number' && Number.isFinite(value));
    if (present.length === 0) return;
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [pairs, value] of present) out.push(`${name}${labels(pairs)} ${value}`);
  };
  const read = states.filter((s) => s.varz);
  const server = (s) => ({ server: s.server });
  const up = states.map((s) => [server(s), s.varz ? 1 : 0]);
  family('nats_up', 'gauge', 'Whether the server answered its monitoring endpoint', up);
  const healthy = read.map((s) => [server(s), s.healthy ? 1 : 0]);
  family('nats_healthy', 'gauge', 'Whether /healthz (JetStream included) reports the server healthy', healthy);
  const info = read.map((s) => [{ ...server(s), server_name: s.varz.server_name, version: s.varz.version }, 1]);
  family('nats_server_info', 'gauge', 'The server name and version (value 1)', info);
  for (const [name, type, help, pick] of VARZ)
    family(
      name,
      type,
      help,
      read.map((s) => [server(s), pick(s.varz)]),
    );
  const js = read.filter((s) => s.jsz);
  for (const [name, type, help, pick] of JSZ)
    family(
      name,
      type,
      help,
      js.map((s) => [server(s), pick(s.jsz)]),
    );
  return `${out.join('\n')}\n`;
}

export function startExporter(config) {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      void Promise.all(config.monitors.map(readServer)).then((states) => {
        for (const s of states.filter((x) => x.error)) console.error(`nats-exporter: ${s.server}: ${s.error}`);
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(render(states));
      });
      return;
    }
    if (path === '/live') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('live\n');
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route ${path}\n`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve(server));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = exporterConfig(process.env);
  const server = await startExporter(config);
  const { port } = server.address();
  const monitors = config.monitors.map((m) => m.url).join(', ');
  console.log(`nats-exporter: serving /metrics on ${config.host}:${port} for ${monitors}`);
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close(() => process.exit(0)));
}
