import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DistillerRoutes, MemoryRoutes, type ServiceName } from '#contracts';
import { createAgentFileStore } from '#agent-files';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import { hostService, type HostedService, type ServiceDefinition } from '#runtime';
import {
  AnthropicLoopback,
  deleteStreamsWithPrefix,
  describeWithNats,
  describeWithRedis,
  pollUntil,
  testServers,
} from '#testing';
import { memoryService } from '../services/memory/src/memory.module.js';
import { distillerService } from '../services/distiller/src/distiller.module.js';
import { agentRuntimeService } from '../services/agent-runtime/src/agent-runtime.module.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();
const logger = createLogger({ service: 'test', level: 'silent' });

describeNats('distill jobs over NATS and Redis', () => {
  describeRedis('a job survives its distiller', () => {
    const prefix = `it-${randomUUID().slice(0, 8)}`;
    const scope = { tenant: 'default', agent: 'fault' };
    const buses: NatsBus[] = [];
    const hosted: HostedService[] = [];
    let model: AnthropicLoopback;
    let dataDir: string;
    let env: NodeJS.ProcessEnv;

    const connect = async (name: string) => {
      const bus = await NatsBus.connect({
        url: testServers.natsUrl,
        name,
        subjectPrefix: `${prefix}.`,
        defaultTimeoutMs: 10_000,
        logger,
      });
      buses.push(bus);
      return bus;
    };
    const host = async <C>(def: ServiceDefinition<C>) => {
      const bus = await connect(def.name);
      const service = await hostService(def, def.loadConfig(env), {
        service: def.name as ServiceName,
        instance: randomUUID(),
        bus,
        logger,
      });
      hosted.push(service);
      return service;
    };

    beforeAll(async () => {
      model = await AnthropicLoopback.start();
      dataDir = await mkdtemp(join(tmpdir(), 'alfred-distill-it-'));
      env = {
        ALFRED_DATA_DIR: dataDir,
        ALFRED_EMBEDDER: 'hash',
        REDIS_URL: testServers.redisUrl,
        ALFRED_REDIS_PREFIX: `${prefix}:`,
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: model.apiKey,
        ALFRED_MODEL_MAX_RETRIES: '0',
        ALFRED_DISTILL_WAIT_MS: '0',
        ALFRED_DISTILL_BACKOFF_MS: '100',
        // A stopping distiller lets a job run 0.6 of this before handing it back.
        ALFRED_SHUTDOWN_DEADLINE_MS: '2000',
      };
    });

    afterAll(async () => {
      for (const s of hosted.reverse()) await s.stop().catch(() => undefined);
      for (const b of buses) await b.close();
      await model.close();
      await deleteStreamsWithPrefix(testServers.natsUrl, `${prefix}.`);
      await rm(dataDir, { recursive: true, force: true });
    });

    it('should complete exactly once on a new instance after the first is stopped mid-job', async () => {
      await host(memoryService);
      // The sessions and agent files a distillation reads and writes are agent-runtime's.
      await host(agentRuntimeService);
      const first = await host(distillerService);
      const api = await connect('test-client');
      await api.request(MemoryRoutes.create, {
        scope,
        memory: { content: 'Ships releases on Fridays', importance: 0.8 },
      });
      // the first instance's model call hangs; the second one's answers at once
      model.script(
        { content: [{ type: 'text', text: '{"insights": [{"text": "stale", "importance": 1}]}' }], delayMs: 20_000 },
        {
          content: [{ type: 'text', text: '{"insights": [{"text": "Releases ship on Fridays", "importance": 0.8}]}' }],
        },
      );
      const accepted = await api.request(DistillerRoutes.distill, { scope, request: { scope: 'all' } });
      expect(accepted.status).toBe('processing');
      const jobId = (accepted as { job_id: string }).job_id;
      await pollUntil(() => model.messageRequests.length === 1, 10_000, 'the first model call');

      // The first instance lets the job run until its drain deadline, then hands it back: redelivered at once (not
      // after the queue's ack wait), it completes on the second instance.
      const stoppedAt = Date.now();
      await first.stop();
      await host(distillerService);

      let job = await api.request(DistillerRoutes.job, { scope, id: jobId });
      await pollUntil(
        async () => (job = await api.request(DistillerRoutes.job, { scope, id: jobId })).status === 'completed',
        15_000,
        'job completed',
      );
      expect(job).toMatchObject({ status: 'completed', result: { insights_added: 1, processed_memories: 1 } });
      expect(Date.now() - stoppedAt).toBeLessThan(30_000); // the queue's ack wait is 60 s: this was a hand-back
      expect(model.messageRequests).toHaveLength(2);

      const files = await createAgentFileStore({
        REDIS_URL: testServers.redisUrl,
        ALFRED_REDIS_PREFIX: `${prefix}:`,
        ALFRED_DATA_DIR: '/nonexistent',
      });
      const memoryFile = await files.read(scope, 'memory');
      await files.close();
      expect(memoryFile.content.match(/Releases ship on Fridays/g)).toHaveLength(1);
      expect(memoryFile.content).not.toContain('stale');
      const stored = await api.request(MemoryRoutes.list, { scope, query: { source: 'memory' } });
      expect(stored.memories.map((m) => m.content)).toEqual(['Releases ship on Fridays']);
    });

    it('should join an identical unfinished job instead of starting another', async () => {
      const api = buses.at(-1)!;
      model.script({ content: [{ type: 'text', text: '{"insights": []}' }], delayMs: 300 });
      const a = await api.request(DistillerRoutes.distill, { scope, request: { scope: 'all', focus: 'releases' } });
      const b = await api.request(DistillerRoutes.distill, { scope, request: { scope: 'all', focus: 'releases' } });
      expect(b).toEqual(a);
      expect(a.status).toBe('processing');
      const id = (a as { job_id: string }).job_id;
      await pollUntil(
        async () => (await api.request(DistillerRoutes.job, { scope, id })).status === 'completed',
        10_000,
        'job completed',
      );
      await expect(api.request(DistillerRoutes.job, { scope: { ...scope, agent: 'other' }, id })).rejects.toMatchObject(
        { code: 'NOT_FOUND' },
      );
    });
  });
});
