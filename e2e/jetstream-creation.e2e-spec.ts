import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import * as contracts from '#contracts';
import { NatsBus, sharedCounters, streamSubjectFor, type Consuming, type WorkQueue } from '#bus';
import { createLogger } from '#logging';
import { startOwnNats, type OwnServer } from '#testing';
import { distillQueue } from '../services/distiller/src/distill-jobs.js';
import { updateQueue } from '../services/channels/src/telegram/update-intake.js';
import { agentDirectory, credentialRevocations, idempotencyStore } from '../services/gateway/src/gateway.module.js';
import { skillProvenanceRepository } from '../services/skill-registry/src/records/skill-provenance.store.js';
import { repo } from './process-harness.js';

const INSTANCES = 4;
const logger = createLogger({ service: 'e2e', level: 'silent' });

/** Every durable event the contracts define: its stream is created by the first publish of each instance. */
const eventDefs = (Object.values(contracts) as unknown[])
  .flatMap((v) => (v && typeof v === 'object' ? [v, ...Object.values(v)] : []))
  .filter(
    (v): v is contracts.EventDef => !!v && typeof v === 'object' && 'stream' in v && 'subject' in v && 'payload' in v,
  );

/**
 * Stream and bucket names the services' source declares (`X_STREAM = '…'`, `X_BUCKET = '…'`, `stream: '…'`,
 * `bus.stream('…')`).
 */
function namesInSource(): { streams: Set<string>; buckets: Set<string> } {
  const streams = new Set<string>();
  const buckets = new Set<string>();
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === 'testing' ? [] : walk(join(dir, e.name))) : [join(dir, e.name)],
    );
  const files = [...walk(join(repo, 'services')), ...walk(join(repo, 'libs'))].filter(
    (f) => f.endsWith('.ts') && !/\.(spec|int-spec|contract)\.ts$/.test(f),
  );
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const [, name] of text.matchAll(/_STREAM = '([A-Z_]+)'/g)) streams.add(name!);
    for (const [, name] of text.matchAll(/\bstream: '([A-Z_]+)'/g)) streams.add(name!);
    for (const [, name] of text.matchAll(/_BUCKET = '([A-Z_]+)'/g)) buckets.add(name!);
    for (const [, name] of text.matchAll(/bus\.stream\('([A-Z_]+)'\)/g)) buckets.add(name!);
  }
  return { streams, buckets };
}

/**
 * Instances that start together (compose runs replicas) create the same streams, KV buckets and consumers
 * at the same moment. Several instances on a fresh NATS server of the test's own each make sure of every stream and
 * bucket the services create, at once, through the services' own code: every one must succeed.
 */
describe('every JetStream stream and bucket, created by several instances at once (own NATS server)', () => {
  let dir: string;
  let nats: OwnServer;
  let buses: NatsBus[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-js-startup-'));
    nats = await startOwnNats(join(dir, 'nats'));
    buses = await Promise.all(
      Array.from({ length: INSTANCES }, (_, i) => NatsBus.connect({ url: nats.url, name: `instance-${i}`, logger })),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all((buses ?? []).map((b) => b.close(2_000)));
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const consumeAndStop = async (queue: WorkQueue) => {
    const consuming: Consuming = await queue.consume(async () => undefined);
    await consuming.stop(1_000);
  };

  /** What one instance of every service does first on each stream and bucket. */
  const startInstance = (bus: NatsBus, i: number) => [
    ...eventDefs.map((def) =>
      bus.streams.ensure({ name: bus.stream(def.stream), subjects: [bus.subject(streamSubjectFor(def))] }),
    ),
    consumeAndStop(distillQueue(bus, { maxAttempts: 5, backoffMs: [1_000], ackWaitMs: 10_000 })),
    consumeAndStop(updateQueue(bus, 30_000)),
    idempotencyStore(bus, logger).reserve(`key-${i}`, 'body'),
    sharedCounters(bus)!.add('outcomes.t.skill', { success: 1 }),
    skillProvenanceRepository(bus, dir).matching('t', 'skill', undefined),
    agentDirectory(bus, dir).then((d) => d.policyOf({ tenant: 't', agent: 'alfred' }, { correlationId: `c-${i}` })),
    // Gateways configured with different credential TTLs (one being upgraded): the bucket differs in its max age.
    credentialRevocations(bus, 660_000 + i * 60_000).isRevoked({
      id: `sig-${i}`,
      tenant: 't',
      agent: 'alfred',
      session: 's',
      iat: 0,
      exp: Date.now() + 1_000,
    }),
  ];

  it("should give every instance every stream, bucket and consumer, none failing on another's create", async () => {
    const started = await Promise.allSettled(buses.flatMap(startInstance));

    expect(
      started.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason)),
    ).toEqual([]);
    const jsm = await jetstreamManager(buses[0]!.nc);
    const made: string[] = [];
    for await (const info of jsm.streams.list()) made.push(info.config.name);
    const { streams, buckets } = namesInSource();
    // Everything the source names was made here, and nothing else: a new stream or bucket must join this test.
    expect(made.sort()).toEqual([...streams, ...[...buckets].map((b) => `KV_${b}`)].sort());
    expect(eventDefs.length).toBeGreaterThan(5);
  }, 60_000);
});
