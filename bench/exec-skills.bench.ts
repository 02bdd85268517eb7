import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { NatsBus } from '#bus';
import type { Logger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { BashSandbox, OsSandbox } from '#sandbox';
import { startEmbedded, startOverNats, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { skillRunnerService } from '../services/skill-runner/src/skill-runner.module.js';
import { load, timeSequential, type BenchRow } from './load.js';

const SECTION = 'exec-skills';
const TRIVIAL = `export async function execute(args: { n: number }) { return { success: true, result: args.n + 1 }; }`;
const HEADERS = { 'content-type': 'application/json' };

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (!res.ok || json.success === false) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const createSkill = (base: string, id: string) =>
  post(`${base}/executable-skills`, {
    id,
    description: 'Adds one',
    parameters: { n: { type: 'integer', default: 1 } },
    code: TRIVIAL,
  });

function latencyRow(name: string, mode: string, t: { p50: number; p99: number; mean: number }, note: string): BenchRow {
  return {
    section: SECTION,
    name,
    mode,
    connections: 1,
    rps: Math.round(1000 / t.mean),
    p50: t.p50,
    p99: t.p99,
    errors: 0,
    note,
  };
}

/** Cold (first run of a new skill version: files fetched by digest, a process spawned) and warm latency. */
async function latencyRows(alfred: RunningAlfred, mode: string, quick: boolean): Promise<BenchRow[]> {
  const ids = Array.from({ length: quick ? 5 : 15 }, (_, i) => `bench-cold-${i}`);
  for (const id of ids) await createSkill(alfred.url, id);
  const cold = await timeSequential(ids.length, (i) =>
    post(`${alfred.url}/executable-skills/${ids[i]}/execute`, { n: i }),
  );
  await createSkill(alfred.url, 'bench-warm');
  const warmUrl = `${alfred.url}/executable-skills/bench-warm/execute`;
  for (let i = 0; i < 10; i++) await post(warmUrl, { n: i });
  const warm = await timeSequential(quick ? 100 : 300, (i) => post(warmUrl, { n: i }));
  return [
    latencyRow(
      'POST /executable-skills/{id}/execute, cold',
      mode,
      cold,
      'first run of a new skill: registry lookup, files by digest, new sandbox process',
    ),
    latencyRow(
      'POST /executable-skills/{id}/execute, warm',
      mode,
      warm,
      'same skill version again: kept-alive sandbox process (target p50 < 20 ms)',
    ),
  ];
}

async function throughput(alfred: RunningAlfred, mode: string, runners: number, quick: boolean): Promise<BenchRow> {
  return load(
    SECTION,
    `executions/s, ${runners} runner${runners > 1 ? 's' : ''}`,
    mode,
    {
      url: `${alfred.url}/executable-skills/bench-warm/execute`,
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ n: 1 }),
      connections: 8,
      duration: quick ? 3 : 5,
    },
    'trivial skill, 8 concurrent clients; each runner keeps one warm process per skill, extra concurrency spawns',
  );
}

/** One `bash` tool call as the agent makes it: a command that calls Alfred's API with curl, start to exit. */
async function bashRows(
  alfred: RunningAlfred,
  label: string,
  mode: 'required' | 'unsafe-off',
  quick: boolean,
): Promise<BenchRow[]> {
  const workspace = await mkdtemp(join(tmpdir(), 'alfred-bench-bash-'));
  const sandbox = new BashSandbox({ mode });
  const run = (command: string) => () =>
    sandbox
      .run({
        command,
        workspace,
        tenant: 'bench',
        env: {},
        apiUrl: alfred.url,
        timeoutMs: 30_000,
        maxOutputChars: 10_000,
        signal: new AbortController().signal,
      })
      .then((r) => {
        if (r.code !== 0) throw new Error(`bash exited ${r.code}: ${r.output}`);
      });
  try {
    const n = quick ? 10 : 30;
    const trivial = await timeSequential(n, run('true'));
    const curl = await timeSequential(n, run('curl -sS --fail -o /dev/null "$ALFRED_API_URL/health"'));
    return [
      latencyRow(
        'bash call: `true`',
        label,
        trivial,
        mode === 'required' ? 'bubblewrap + in-sandbox API relay + host proxy' : 'host bash, no OS layer (baseline)',
      ),
      latencyRow(
        'bash call: curl $ALFRED_API_URL/health',
        label,
        curl,
        mode === 'required'
          ? 'through the sandbox loopback relay and the host proxy'
          : 'straight to the gateway (baseline)',
      ),
    ];
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/**
 * Executable-skill latency through the gateway (embedded and NATS) and executions/s with one and two runners, and
 * the agent's bash call; the embedded shape runs twice, with the OS sandbox and without it (same-run baseline).
 */
export async function execSkillsBench(options: {
  logger: Logger;
  quick: boolean;
  natsUrl?: string;
}): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const os = (await OsSandbox.probe()).available;
  const variants: Array<{ mode: 'embedded' | 'nats'; sandbox: 'required' | 'unsafe-off' }> = [
    ...(os ? [{ mode: 'embedded' as const, sandbox: 'required' as const }] : []),
    { mode: 'embedded', sandbox: 'unsafe-off' },
    ...(options.natsUrl && os ? [{ mode: 'nats' as const, sandbox: 'required' as const }] : []),
  ];
  for (const { mode: shape, sandbox } of variants) {
    const mode = `${shape}, ${sandbox === 'required' ? 'OS sandbox' : 'no OS layer'}`;
    const dataDir = await mkdtemp(join(tmpdir(), `alfred-bench-exec-${shape}-`));
    const env = {
      ALFRED_DATA_DIR: dataDir,
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'silent',
      ALFRED_SKILLS_WATCH: 'false',
      ALFRED_PROJECT_DIR: dataDir,
      ALFRED_HOME_DIR: dataDir,
      ALFRED_OS_SANDBOX: sandbox,
    };
    const prefix = `bench-exec-${randomUUID().slice(0, 8)}.`;
    const base = { env, gateway: loadGatewayConfig(env), logger: options.logger, port: 0 };
    const alfred =
      shape === 'embedded'
        ? await startEmbedded(base)
        : await startOverNats({ ...base, natsUrl: options.natsUrl!, subjectPrefix: prefix, ephemeral: true });
    let second: { hosted: HostedService; bus: NatsBus } | undefined;
    try {
      rows.push(...(await latencyRows(alfred, mode, options.quick)));
      rows.push(await throughput(alfred, mode, 1, options.quick));
      if (shape === 'embedded') rows.push(...(await bashRows(alfred, mode, sandbox, options.quick)));
      if (shape === 'nats') {
        const bus = await NatsBus.connect({
          url: options.natsUrl!,
          name: 'bench-runner-2',
          subjectPrefix: prefix,
          logger: options.logger,
        });
        const config = skillRunnerService.loadConfig({
          ALFRED_DATA_DIR: join(dataDir, 'runner-2'),
          ALFRED_OS_SANDBOX: sandbox,
        });
        second = {
          bus,
          hosted: await hostService(skillRunnerService, config, {
            service: skillRunnerService.name,
            instance: 'runner-2',
            bus,
            logger: options.logger,
          }),
        };
        rows.push(await throughput(alfred, mode, 2, options.quick));
      }
    } finally {
      await second?.hosted.stop();
      await second?.bus.close();
      await alfred.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}
