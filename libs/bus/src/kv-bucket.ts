import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV, type KvOptions } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { createRacing } from './jetstream-create.js';

/**
 * Opens a KV bucket, creating it when it is not there, with `options.replicas` copies (ALFRED_STREAM_REPLICAS): a
 * bucket found with fewer copies is raised to that number (never lowered), as the services' streams are, so moving a
 * deployment from one server to a cluster does not leave its Idempotency-Key or counters bucket on one node.
 * `timeoutMs` bounds each request of the bucket (default: the connection's 5 s). Instances that open a new bucket at
 * the same moment (replicas starting together) all get it: a create that loses the race opens the winner's bucket.
 */
export async function openKvBucket(
  nc: NatsConnection,
  name: string,
  options: Partial<KvOptions>,
  timeoutMs?: number,
): Promise<KV> {
  const js = jetstream(nc, timeoutMs === undefined ? {} : { timeout: timeoutMs });
  // An existing bucket is opened as it is: Kvm.create looks first and does not change its configuration.
  const kv = await createRacing(() => new Kvm(js).create(name, options));
  const wanted = options.replicas ?? 1;
  const { streamInfo } = await kv.status();
  if ((streamInfo.config.num_replicas ?? 1) < wanted) {
    const jsm = await js.jetstreamManager();
    await jsm.streams.update(streamInfo.config.name, { ...streamInfo.config, num_replicas: wanted });
  }
  return kv;
}

/** `openKvBucket` on first use, shared by later calls; an open that failed is tried again by the next call. */
export function lazyKvBucket(
  nc: NatsConnection,
  name: string,
  options: Partial<KvOptions>,
  timeoutMs?: number,
): () => Promise<KV> {
  let bucket: Promise<KV> | undefined;
  return () =>
    (bucket ??= openKvBucket(nc, name, options, timeoutMs).catch((err: unknown) => {
      bucket = undefined;
      throw err;
    }));
}
