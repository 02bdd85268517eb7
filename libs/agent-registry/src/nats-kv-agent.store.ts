import type { KV, KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { lazyKvBucket } from '#bus';
import type { AgentRecord, AgentStore } from './agent-store.js';

/** The registry's bucket (before the bus's subject prefix): agent-runtime writes it, every gateway reads it. */
export const AGENT_REGISTRY_BUCKET = 'ALFRED_AGENTS';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAX_CAS_ATTEMPTS = 20;

/** A KV key token for a tenant: any string, so base64url (KV keys allow letters, digits, `-`, `_`, `=`, `/`, `.`). */
const tenantToken = (tenant: string) => Buffer.from(tenant, 'utf8').toString('base64url');
const keyOf = (tenant: string, name: string) => `${tenantToken(tenant)}.${name}`;
const live = (e: KvEntry | null): e is KvEntry => e !== null && e.operation === 'PUT';
const decode = (e: KvEntry) => JSON.parse(decoder.decode(e.value)) as AgentRecord;
const isCasConflict = (err: unknown) => /wrong last sequence|key exists/i.test(String((err as Error)?.message ?? err));

/**
 * Agents in a JetStream KV bucket (history 1), one key per tenant and agent name (`<tenant, base64url>.<name>`): every
 * agent-runtime instance and every gateway reads the same records over NATS, so whether an agent exists (and what its
 * policy permits) is known without agent-runtime being up. Creates are atomic (`create`), changes compare-and-set.
 */
export class NatsKvAgentStore implements AgentStore {
  private readonly kv: () => Promise<KV>;

  constructor(nc: NatsConnection, name: string, replicas = 1, timeoutMs?: number) {
    this.kv = lazyKvBucket(nc, name, { history: 1, replicas }, timeoutMs);
  }

  async create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }> {
    const kv = await this.kv();
    for (let attempt = 1; ; attempt++) {
      try {
        await kv.create(keyOf(tenant, record.name), encoder.encode(JSON.stringify(record)));
        return { record, created: true };
      } catch (err) {
        if (!isCasConflict(err)) throw err;
        const existing = await kv.get(keyOf(tenant, record.name));
        // Deleted between our create and get: try again.
        if (live(existing)) return { record: decode(existing), created: false };
        if (attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }

  async get(tenant: string, name: string): Promise<AgentRecord | undefined> {
    const entry = await (await this.kv()).get(keyOf(tenant, name));
    return live(entry) ? decode(entry) : undefined;
  }

  async list(tenant: string): Promise<AgentRecord[]> {
    const kv = await this.kv();
    const keys: string[] = [];
    for await (const key of await kv.keys(`${tenantToken(tenant)}.*`)) keys.push(key);
    const entries = await Promise.all(keys.map((key) => kv.get(key)));
    return entries.filter(live).map(decode);
  }

  async update(tenant: string, record: AgentRecord): Promise<boolean> {
    const kv = await this.kv();
    const key = keyOf(tenant, record.name);
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      if (!live(entry)) return false;
      try {
        await kv.update(key, encoder.encode(JSON.stringify(record)), entry.revision);
        return true;
      } catch (err) {
        if (!isCasConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    const kv = await this.kv();
    const key = keyOf(tenant, name);
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      if (!live(entry)) return false;
      try {
        await kv.delete(key, { previousSeq: entry.revision });
        return true;
      } catch (err) {
        if (!isCasConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }

  async close(): Promise<void> {}
}
