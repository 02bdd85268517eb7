import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pollUntil } from '#testing';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url).pathname;

/** Why docker/engine.sh cannot start an engine here (its own answer), or '' when it can. */
const probe = await run('bash', ['-c', 'source docker/engine.sh; engine_unavailable'], { cwd: repo });
const unavailable = probe.stdout.trim();
if (unavailable && process.env.CI === 'true') throw new Error(`docker/engine.sh cannot start: ${unavailable}`);
if (unavailable) process.stderr.write(`[skip] docker/engine.sh tests: ${unavailable}\n`);

interface Engine {
  readonly name: string;
  readonly env: Record<string, string>;
}

/** Runs `script` with docker/engine.sh sourced for `engine` (its own root and run folders); resolves with stdout. */
async function sh(engine: Engine, script: string): Promise<string> {
  const env = { ...process.env, ...engine.env };
  const { stdout } = await run('bash', ['-c', `source docker/engine.sh; ${script}`], { cwd: repo, env });
  return stdout.trim();
}

/** What the engine's network file says: bridge, bridge address, pool, slot. */
async function network(engine: Engine): Promise<{ bridge: string; bip: string; pool: string; slot: string }> {
  const [bridge, bip, pool, slot] = (await sh(engine, 'cat "$ENGINE_RUN/network"')).split(' ');
  return { bridge: bridge!, bip: bip!, pool: pool!, slot: slot! };
}

const linkExists = (name: string) =>
  run('ip', ['link', 'show', name]).then(
    () => true,
    () => false,
  );

/**
 * docker/engine.sh, which docker/compose-e2e.sh and the testcontainers path run on: engines of different folders on
 * one machine get their own bridge and ranges and leave each other's alone, and one engine shared by several runs
 * keeps running until the last of them lets it go.
 */
(unavailable ? describe.skip : describe)('docker/engine.sh', () => {
  let dir: string;
  let a: Engine;
  let b: Engine;
  const holders: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-engines-'));
    const engine = (name: string): Engine => ({
      name,
      env: { ALFRED_ENGINE_ROOT: join(dir, name, 'root'), ALFRED_ENGINE_RUN: join(dir, name, 'run') },
    });
    a = engine('a');
    b = engine('b');
  });
  afterAll(async () => {
    for (const holder of holders) holder.kill();
    for (const engine of [a, b]) await sh(engine, 'engine_stop').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("should run two engines side by side, and stop one without touching the other's network", async () => {
    await sh(a, 'engine_start');
    await sh(b, 'engine_start');
    const [na, nb] = [await network(a), await network(b)];
    expect(new Set([na.bridge, nb.bridge, na.bip, nb.bip, na.pool, nb.pool, na.slot, nb.slot]).size).toBe(8);
    // B's compose-style network comes from B's pool.
    const subnet = await sh(
      b,
      '"$DOCKER_CLI" network create alfred-engine-test >/dev/null && ' +
        '"$DOCKER_CLI" network inspect -f "{{(index .IPAM.Config 0).Subnet}}" alfred-engine-test',
    );
    expect(subnet.split('.').slice(0, 2).join('.')).toBe(nb.pool.split('.').slice(0, 2).join('.'));

    await sh(a, 'engine_stop');
    expect(await linkExists(na.bridge)).toBe(false);
    expect(await linkExists(nb.bridge)).toBe(true);
    const created = await sh(b, 'engine_answers && "$DOCKER_CLI" network create alfred-test-2 >/dev/null && echo ok');
    expect(created).toBe('ok');
    const networkId = await sh(b, '"$DOCKER_CLI" network inspect -f "{{.Id}}" alfred-test-2');
    const networkBridge = `br-${networkId.slice(0, 12)}`;
    expect(await linkExists(networkBridge)).toBe(true);
    await sh(b, 'engine_stop');
    // Neither its own bridge nor its networks' are left on the host (holding address ranges).
    expect([await linkExists(nb.bridge), await linkExists(networkBridge)]).toEqual([false, false]);
    // No slot is left claimed by either engine.
    const held = 'for n in "$ENGINE_SLOTS"/*; do [ "$(cat "$n" 2>/dev/null)" = "$ENGINE_RUN" ] && echo "$n"; done;:';
    expect(await sh(a, held)).toBe('');
    expect(await sh(b, held)).toBe('');
  }, 120_000);

  it('should keep a shared engine running until the last of its users releases it', async () => {
    // A long-lived user (a run still in progress) acquires first, and starts the engine.
    const hold = 'source docker/engine.sh; engine_acquire >/dev/null 2>&1 && echo acquired; exec sleep 600';
    const holder = spawn('bash', ['-c', hold], {
      cwd: repo,
      env: { ...process.env, ...a.env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    holders.push(holder);
    let said = '';
    holder.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    await pollUntil(() => said.includes('acquired'), 60_000, 'the first user to acquire the engine');
    const pid = await sh(a, 'cat "$ENGINE_RUN/owner.pid"');

    // A second run uses it and finishes: the engine stays for the first.
    await sh(a, 'engine_acquire && engine_release');
    expect(await sh(a, `kill -0 ${pid} && engine_answers && echo running`)).toBe('running');

    // The first user is gone (killed, as a run can be); the next release finds no live user and stops the engine.
    holder.kill();
    await new Promise((resolve) => holder.once('exit', resolve));
    await sh(a, 'engine_acquire && engine_release');
    expect(await sh(a, `kill -0 ${pid} 2>/dev/null && echo running || echo stopped`)).toBe('stopped');
  }, 120_000);
});
