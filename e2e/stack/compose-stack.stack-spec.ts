import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { pollUntil } from '#testing';
import { readmeCurlExamples, withVariables } from '../readme-examples.js';
import { api, compose, curl, describeStack, stack } from './stack-env.js';

const run = promisify(execFile);
const URL_ = stack.url;
const KEY = stack.key;
const PROMETHEUS = stack.prometheus;

/** Every scrape target the stack's Prometheus must have up (lancedb and metrics profiles, two replicas of two). */
const TARGETS: Record<string, number> = {
  gateway: 1,
  'memory-lancedb': 1,
  'skill-registry-lancedb': 1,
  'skill-runner': 2,
  'agent-runtime': 2,
  compactor: 1,
  distiller: 1,
  learner: 1,
  channels: 1,
  nats: 1,
  redis: 1,
};

interface Target {
  health: string;
  lastError: string;
  labels: { job: string; instance: string };
}

/** docker-compose.yml as an operator runs it (docker/compose-e2e.sh started it); only published ports are used. */
describeStack('the compose stack', () => {
  it('should report every service up on /health', async () => {
    const health = await api('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('healthy');
    expect(Object.values(health.body.services).every((s) => s === 'up')).toBe(true);
    expect(Object.keys(health.body.services).sort()).toEqual([
      'agent-runtime',
      'channels',
      'compactor',
      'distiller',
      'learner',
      'memory',
      'skill-registry',
      'skill-runner',
    ]);
  });

  it('should answer every curl example of the README', async () => {
    const vars: Record<string, string> = { A: URL_ };
    const created = await api('POST', '/memories', { content: 'the id the README calls $ID' });
    vars.ID = created.body.id;
    for (const example of readmeCurlExamples()) {
      const res = await curl(withVariables(example, vars));
      if (example.assigns) vars[example.assigns] = res.body.id;
      expect(`${example.line} -> ${res.status}`).toMatch(/ -> [23]\d\d$/);
      if (example.url === '$A/memories' && example.method === 'POST') expect(res.status).toBe(201);
    }
    expect(vars.SID).toMatch(/\S/);
  }, 60_000);

  it("should run a bundled skill's curl from inside an agent container", async () => {
    const skill = readFileSync(new URL('../../skills/remember/SKILL.md', import.meta.url), 'utf8');
    const command = /```bash\n(curl [\s\S]*?)```/
      .exec(skill)![1]!
      .replace('dark mode in every editor', 'dark mode, stored from a container');
    await compose('exec', '-T', '-u', 'node', '-e', `ALFRED_API_KEY=${KEY}`, 'agent-runtime', 'sh', '-c', command);
    const found = await api('GET', '/search?q=stored%20from%20a%20container&limit=5');
    expect(found.body.results.map((r: { content: string }) => r.content)).toContain(
      'User prefers dark mode, stored from a container and terminal',
    );
  }, 30_000);

  it('should write to every volume the services own', async () => {
    const name = `ops-${Date.now()}`;
    const skill = await api('POST', '/skills', {
      name,
      description: 'Written by the compose test to the skills volume.',
      body: '# Ops\nA skill body.',
    });
    expect(skill.status).toBe(201);
    const code = 'export async function execute(args: { n: number }) { return { success: true, result: args.n * 2 }; }';
    const exec = await api('POST', '/executable-skills', {
      id: name,
      description: 'Doubles',
      parameters: { n: { type: 'number', required: true } },
      code,
    });
    expect(exec.status).toBe(201);
    expect((await api('POST', `/executable-skills/${name}/execute`, { n: 21 })).body).toMatchObject({
      success: true,
      result: 42,
    });
    // The agents' shared workspace volume, written as the user the services run as.
    const probe = 'id -un && touch /data/workspaces/probe && echo ok';
    const { stdout } = await compose('exec', '-T', '-u', 'node', '--index=2', 'agent-runtime', 'sh', '-c', probe);
    expect(stdout.split('\n')).toEqual(['node', 'ok', '']);
  }, 60_000);

  it('should serve metrics behind the API key, and Prometheus scrape every service, NATS and Redis', async () => {
    const open = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `${URL_}/metrics`]);
    expect(open.stdout).toBe('401');
    const metrics = await run('curl', ['-sS', '-H', `Authorization: Bearer ${KEY}`, `${URL_}/metrics`]);
    expect(metrics.stdout).toMatch(/^alfred_http_requests_total\{method="POST",route="\/memories",status="201"\} \d+/m);
    if (!PROMETHEUS) throw new Error('ALFRED_STACK_PROMETHEUS is unset: compose-e2e.sh runs the metrics profile');
    const prometheus = async <T>(path: string) =>
      ((await (await fetch(`${PROMETHEUS}${path}`)).json()) as { data: T }).data;
    let targets: Target[] = [];
    const upIn = (job: string) => targets.filter((t) => t.labels.job === job && t.health === 'up').length;
    const byJob = () => Object.fromEntries(Object.keys(TARGETS).map((job) => [job, upIn(job)]));
    const expected = Object.values(TARGETS).reduce((a, b) => a + b);
    try {
      await pollUntil(
        async () => {
          targets = (await prometheus<{ activeTargets: Target[] }>('/api/v1/targets?state=active')).activeTargets;
          return targets.length === expected && targets.every((t) => t.health === 'up');
        },
        90_000,
        'every scrape target up',
      );
    } finally {
      console.log(`Prometheus targets up by job: ${JSON.stringify(byJob())}`);
      for (const t of targets.filter((x) => x.health !== 'up')) {
        console.log(`down: ${t.labels.job} ${t.labels.instance}: ${t.lastError}`);
      }
    }
    expect(byJob()).toEqual(TARGETS);
    // The exporters read the real servers, not just answer: Prometheus has NATS and Redis up through them.
    const value = async (query: string) => {
      type Vector = { result: Array<{ value: [number, string] }> };
      const res = await prometheus<Vector>(`/api/v1/query?query=${encodeURIComponent(query)}`);
      return res.result.map((r) => Number(r.value[1]));
    };
    expect(await value('nats_up')).toEqual([1]);
    expect((await value('nats_jetstream_streams'))[0]).toBeGreaterThan(0);
    expect(await value('redis_up')).toEqual([1]);
  }, 150_000);

  it('should lose no acknowledged write when the NATS container restarts under load', async () => {
    const acknowledged: string[] = [];
    const failures: number[] = [];
    let loading = true;
    const worker = async (w: number) => {
      for (let i = 0; loading; i++) {
        const res = await api('POST', '/memories', { content: `load ${w}-${i}`, tags: ['nats-restart'] });
        if (res.status === 201) acknowledged.push(res.body.id);
        else failures.push(res.status);
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await pollUntil(() => acknowledged.length >= 20, 30_000, 'load before the restart');
    await compose('restart', 'nats');
    const before = acknowledged.length;
    await pollUntil(() => acknowledged.length >= before + 20, 90_000, 'writes acknowledged again after the restart');
    loading = false;
    await Promise.all(workers);
    // What failed during the outage failed cleanly: unavailable or timed out, never a hang or a 500.
    expect(failures.filter((s) => s !== 503 && s !== 504)).toEqual([]);
    console.log(
      `NATS restart under load: ${acknowledged.length} writes acknowledged, ${failures.length} refused ` +
        `(503/504) during the outage`,
    );
    await pollUntil(async () => (await api('GET', '/health')).body.status === 'healthy', 60_000, 'healthy again');
    for (const id of acknowledged) expect(`${id} ${(await api('GET', `/memories/${id}`)).status}`).toBe(`${id} 200`);
  }, 240_000);
});
