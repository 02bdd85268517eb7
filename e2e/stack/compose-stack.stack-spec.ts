import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { pollUntil } from '#testing';
import { readmeCurlExamples, runCurl, withVariables } from '../readme-examples.js';

const run = promisify(execFile);
const URL_ = process.env.ALFRED_STACK_URL!;
const KEY = process.env.ALFRED_STACK_KEY!;
const PROMETHEUS = process.env.ALFRED_STACK_PROMETHEUS;
const COMPOSE = (process.env.ALFRED_STACK_COMPOSE ?? '').split(' ').filter(Boolean);

/** docker-compose with the script's project, env file and compose file. */
const compose = (...args: string[]) => run(COMPOSE[0]!, [...COMPOSE.slice(1), ...args], { maxBuffer: 16 * 1024 * 1024 });

/** curl on the host against the published port, with the key. */
const curl = (args: readonly string[]) => runCurl(args, [`Authorization: Bearer ${KEY}`]);

const api = (method: string, path: string, body?: unknown) =>
  curl(['curl', '-X', method, `${URL_}${path}`, ...(body === undefined ? [] : ['-H', 'Content-Type: application/json', '-d', JSON.stringify(body)])]);

const describeStack = process.env.ALFRED_STACK_URL ? describe : describe.skip;

/** docker-compose.yml as an operator runs it (docker/compose-e2e.sh started it); only published ports are used. */
describeStack('the compose stack', () => {
  it('should report every service up on /health', async () => {
    const health = await api('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('healthy');
    expect(Object.values(health.body.services).every((s) => s === 'up')).toBe(true);
    expect(Object.keys(health.body.services).sort()).toEqual(['agent-runtime', 'channels', 'compactor', 'distiller', 'learner', 'memory', 'skill-registry', 'skill-runner']);
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
    const command = /```bash\n(curl [\s\S]*?)```/.exec(skill)![1]!.replace('dark mode in every editor', 'dark mode, stored from a container');
    await compose('exec', '-T', '-e', `ALFRED_API_KEY=${KEY}`, 'agent-runtime', 'sh', '-c', command);
    const found = await api('GET', '/search?q=stored%20from%20a%20container&limit=5');
    expect(found.body.results.map((r: { content: string }) => r.content)).toContain('User prefers dark mode, stored from a container and terminal');
  }, 30_000);

  it('should write to every volume the services own', async () => {
    const name = `ops-${Date.now()}`;
    const skill = await api('POST', '/skills', { name, description: 'Written by the compose test to the skills volume.', body: '# Ops\nA skill body.' });
    expect(skill.status).toBe(201);
    const code = 'export async function execute(args: { n: number }) { return { success: true, result: args.n * 2 }; }';
    const exec = await api('POST', '/executable-skills', { id: name, description: 'Doubles', parameters: { n: { type: 'number', required: true } }, code });
    expect(exec.status).toBe(201);
    expect((await api('POST', `/executable-skills/${name}/execute`, { n: 21 })).body).toMatchObject({ success: true, result: 42 });
    // The agents' shared workspace volume, written as the user the services run as.
    const { stdout } = await compose('exec', '-T', '--index=2', 'agent-runtime', 'sh', '-c', 'id -un && touch /data/workspaces/probe && echo ok');
    expect(stdout.split('\n')).toEqual(['node', 'ok', '']);
  }, 60_000);

  it('should serve Prometheus metrics behind the API key, and Prometheus should scrape every service', async () => {
    const open = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `${URL_}/metrics`]);
    expect(open.stdout).toBe('401');
    const metrics = await run('curl', ['-sS', '-H', `Authorization: Bearer ${KEY}`, `${URL_}/metrics`]);
    expect(metrics.stdout).toMatch(/^alfred_http_requests_total\{method="POST",route="\/memories",status="201"\} \d+/m);
    if (!PROMETHEUS) return;
    await pollUntil(async () => {
      const targets = (await (await fetch(`${PROMETHEUS}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string }> } };
      return targets.data.activeTargets.length >= 10 && targets.data.activeTargets.every((t) => t.health === 'up');
    }, 60_000, 'every scrape target up');
  }, 90_000);

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
    console.log(`NATS restart under load: ${acknowledged.length} writes acknowledged, ${failures.length} refused (503/504) during the outage`);
    await pollUntil(async () => (await api('GET', '/health')).body.status === 'healthy', 60_000, 'healthy again');
    for (const id of acknowledged) expect(`${id} ${(await api('GET', `/memories/${id}`)).status}`).toBe(`${id} 200`);
  }, 240_000);
});
