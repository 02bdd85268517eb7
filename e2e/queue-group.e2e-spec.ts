import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { healthRoute, ServiceName } from '#contracts';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { deleteStreamsWithPrefix, describeWithNats, testServers } from '#testing';
import { memoryService } from '../services/memory/src/memory.module.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });
const describeNats = await describeWithNats();

/** Several instances of a service share its queue group: each request is answered once, by any of them. */
describeNats('memory service instances in one queue group', () => {
  const prefix = `qg-${randomUUID().slice(0, 8)}.`;
  const buses: NatsBus[] = [];
  const hosted: HostedService[] = [];
  let dir: string;
  const connect = async (name: string) => {
    const bus = await NatsBus.connect({ url: testServers.natsUrl, name, subjectPrefix: prefix, logger });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-qg-'));
    for (const instance of ['memory-a', 'memory-b']) {
      const env = { ALFRED_DATA_DIR: join(dir, instance), ALFRED_EMBEDDER: 'hash' };
      hosted.push(
        await hostService(memoryService, memoryService.loadConfig(env), {
          service: ServiceName.Memory,
          instance,
          bus: await connect(instance),
          logger,
        }),
      );
    }
  });
  afterAll(async () => {
    for (const h of hosted) await h.stop();
    for (const b of buses) await b.close();
    await deleteStreamsWithPrefix(testServers.natsUrl, prefix);
    await rm(dir, { recursive: true, force: true });
  });

  it('should spread requests over both instances and answer each exactly once', async () => {
    const client = await connect('qg-client');
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => client.request(healthRoute(ServiceName.Memory), {})),
    );
    const byInstance = new Map<string, number>();
    for (const a of answers) byInstance.set(a.instance, (byInstance.get(a.instance) ?? 0) + 1);
    expect([...byInstance.keys()].sort()).toEqual(['memory-a', 'memory-b']);
    expect([...byInstance.values()].reduce((x, y) => x + y, 0)).toBe(40);
  });

  it('should keep answering when one instance stops', async () => {
    await hosted.shift()!.stop();
    const client = buses.at(-1)!;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => client.request(healthRoute(ServiceName.Memory), {})),
    );
    expect(new Set(answers.map((a) => a.instance))).toEqual(new Set(['memory-b']));
  });
});
