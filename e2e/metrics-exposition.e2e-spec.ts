import { spawn } from 'node:child_process';
import { client, startSystem, type TestSystem } from './harness.js';
import { describeWithTool } from './tool-gate.js';

/** Prometheus's own linter for the text exposition format (Debian's `prometheus` package; `.ci/run` installs it). */
const PROMTOOL = 'promtool';

/** `promtool check metrics` on an exposition: its exit code and every finding it printed. */
function promtoolCheck(exposition: string): Promise<{ code: number | null; findings: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let findings = '';
    child.stdout.on('data', (d: Buffer) => (findings += d.toString()));
    child.stderr.on('data', (d: Buffer) => (findings += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, findings }));
    child.stdin.end(exposition);
  });
}

describeWithTool(PROMTOOL, 'apt-get install prometheus', 'the /metrics exposition', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem('embedded');
  }, 60_000);
  afterAll(() => system?.stop());

  it('should pass `promtool check metrics` clean, with samples in every kind of metric', async () => {
    const api = client(system.url);
    // Traffic first, so counters, histograms and labelled gauges have samples, not only their HELP and TYPE lines.
    expect((await api.post('/memories', { content: 'metrics are linted' })).status).toBe(201);
    expect((await api.get('/search?q=metrics')).status).toBe(200);
    expect((await api.get('/no-such-route')).status).toBe(404);
    const res = await fetch(`${system.url}/metrics`);
    expect(res.status).toBe(200);
    const exposition = await res.text();
    for (const family of [
      'alfred_http_requests_total',
      'alfred_http_request_duration_seconds_bucket',
      'alfred_bus_requests_total',
      'nodejs_active_handles',
    ]) {
      expect(exposition).toMatch(new RegExp(`^${family}\\{`, 'm'));
    }
    expect(await promtoolCheck(exposition)).toEqual({ code: 0, findings: '' });
  });

  it('should make promtool fail on a finding (the check can fail)', async () => {
    const flagged = await promtoolCheck('# HELP x_total a gauge named as a counter\n# TYPE x_total gauge\nx_total 1\n');
    expect(flagged.code).not.toBe(0);
    expect(flagged.findings).toContain('x_total');
  });
});
