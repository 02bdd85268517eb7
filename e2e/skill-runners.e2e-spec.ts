import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutableSkillRoutes, ServiceName, SkillRunnerRoutes, type ServiceName as Service } from '#contracts';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import { hostService, type HostedService, type ServiceDefinition } from '#runtime';
import { deleteStreamsWithPrefix, describeWithNats, SANDBOX_MODE, testServers } from '#testing';
import { skillRegistryService } from '../services/skill-registry/src/skill-registry.module.js';
import { skillRunnerService } from '../services/skill-runner/src/skill-runner.module.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });
const describeNats = await describeWithNats();
const scope = { tenant: 'default', agent: 'tester' };
const caller = scope;

const SLOW_ECHO = (tag: string) => `export async function execute(args: { n: number }) {
  await new Promise((resolve) => setTimeout(resolve, 40));
  return { success: true, result: { n: args.n, tag: ${JSON.stringify(tag)} } };
}`;

/** Runner instances share the skill-runner queue group over real NATS; neither shares a disk with the registry. */
describeNats('skill runners in one queue group over NATS', () => {
  const prefix = `runners-${randomUUID().slice(0, 8)}.`;
  const buses: NatsBus[] = [];
  const hosted: HostedService[] = [];
  let dir: string;
  let client: NatsBus;

  const connect = async (name: string) => {
    const bus = await NatsBus.connect({
      url: testServers.natsUrl,
      name,
      subjectPrefix: prefix,
      defaultTimeoutMs: 30_000,
      logger,
    });
    buses.push(bus);
    return bus;
  };
  const host = async <C>(def: ServiceDefinition<C>, instance: string, env: NodeJS.ProcessEnv) => {
    const ctx = { service: def.name as Service, instance, bus: await connect(instance), logger };
    hosted.push(await hostService(def, def.loadConfig(env), ctx));
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-runners-'));
    await host(skillRegistryService, 'registry', {
      ALFRED_DATA_DIR: join(dir, 'registry'),
      ALFRED_PROJECT_DIR: join(dir, 'project'),
      ALFRED_HOME_DIR: join(dir, 'home'),
      ALFRED_EMBEDDER: 'hash',
      ALFRED_OS_SANDBOX: SANDBOX_MODE,
      ALFRED_SKILLS_WATCH: 'false',
    });
    for (const instance of ['runner-a', 'runner-b'])
      await host(skillRunnerService, instance, { ALFRED_DATA_DIR: join(dir, instance) });
    client = await connect('client');
    await client.request(ExecutableSkillRoutes.create, {
      scope,
      body: {
        id: 'slow-echo',
        description: 'Echoes after a pause',
        parameters: { n: { type: 'integer', required: true } },
        code: SLOW_ECHO('v1'),
      },
    });
  }, 60_000);

  afterAll(async () => {
    for (const h of hosted.reverse()) await h.stop();
    for (const b of buses) await b.close();
    await deleteStreamsWithPrefix(testServers.natsUrl, prefix);
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('should spread concurrent runs over both runners, each answered once and recorded with its runner', async () => {
    const runs = await Promise.all(
      Array.from({ length: 24 }, (_, n) =>
        client.request(SkillRunnerRoutes.execute, { id: 'slow-echo', args: { n }, caller }),
      ),
    );
    expect(runs.map((r) => r.result)).toEqual(Array.from({ length: 24 }, (_, n) => ({ n, tag: 'v1' })));
    const byRunner = new Map<string, number>();
    for (const r of runs) byRunner.set(r.runner, (byRunner.get(r.runner) ?? 0) + 1);
    expect([...byRunner.keys()].sort()).toEqual(['runner-a', 'runner-b']);
    const log = await client.request(SkillRunnerRoutes.executions, {
      scope,
      id: 'slow-echo',
      query: { limit: 100, offset: 0 },
    });
    expect(log.total).toBe(24);
    expect(new Set(log.executions.map((e) => e.executionId))).toEqual(new Set(runs.map((r) => r.execution_id)));
    const recorded = new Map(log.executions.map((e) => [e.executionId, e.runner]));
    for (const r of runs) expect(recorded.get(r.execution_id)).toBe(r.runner);
    // Each runner fetched the files over the bus into its own cache, keyed by digest.
    for (const instance of ['runner-a', 'runner-b']) {
      expect(await readdir(join(dir, instance, 'skill-runner', 'cache'))).toContain(
        runs[0]!.digest.replace('sha256:', ''),
      );
    }
  }, 60_000);

  it('should run the new version on every runner right after an update', async () => {
    const updated = await client.request(ExecutableSkillRoutes.update, {
      tenant: caller.tenant,
      id: 'slow-echo',
      patch: { code: SLOW_ECHO('v2') },
    });
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        client.request(SkillRunnerRoutes.execute, { id: 'slow-echo', args: { n }, caller }),
      ),
    );
    expect(new Set(runs.map((r) => (r.result as { tag: string }).tag))).toEqual(new Set(['v2']));
    expect(new Set(runs.map((r) => r.digest))).toEqual(new Set([updated.digest]));
  }, 60_000);

  it('should keep executing on the remaining runner when one stops', async () => {
    const runnerA = hosted.find((h) => h.name === ServiceName.SkillRunner)!;
    hosted.splice(hosted.indexOf(runnerA), 1);
    await runnerA.stop();
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        client.request(SkillRunnerRoutes.execute, { id: 'slow-echo', args: { n }, caller }),
      ),
    );
    expect(new Set(runs.map((r) => r.runner))).toEqual(new Set(['runner-b']));
  }, 60_000);
});
