import { join } from 'node:path';
import { isKvConflict, keyToken, type KvEntry, type KvStore } from '#kv';
import type { AgentRecord, AgentStore } from './agent-store.js';

/** The registry's bucket (before the bus's subject prefix): agent-runtime writes it, every gateway reads it. */
export const AGENT_REGISTRY_BUCKET = 'ALFRED_AGENTS';

/** The registry's folder, embedded (files of the key-value port): agent-runtime writes it, the gateway reads it. */
export const agentRegistryDir = (dataDir: string) => join(dataDir, 'kv', 'agents');

const MAX_CAS_ATTEMPTS = 20;

/** One key per tenant and agent name (names are lowercase letters, digits and hyphens: a key token as they are). */
const keyOf = (tenant: string, name: string) => `${keyToken(tenant)}.${name}`;
const decode = (e: KvEntry) => JSON.parse(e.value) as AgentRecord;

/**
 * Agents in a key-value bucket: distributed, a NATS KV bucket every agent-runtime instance and every gateway reads, so
 * whether an agent exists (and what its policy permits) is known without agent-runtime being up; embedded, files
 * under the data dir. Creates are atomic (compare-and-set on an absent key), changes compare-and-set.
 */
export class KvAgentStore implements AgentStore {
  constructor(private readonly kv: KvStore) {}

  async create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }> {
    const key = keyOf(tenant, record.name);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.kv.put(key, JSON.stringify(record), { expected: 0 });
        return { record, created: true };
      } catch (err) {
        if (!isKvConflict(err)) throw err;
        const existing = await this.kv.get(key);
        // Deleted between our create and get: try again.
        if (existing) return { record: decode(existing), created: false };
        if (attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }

  async get(tenant: string, name: string): Promise<AgentRecord | undefined> {
    const entry = await this.kv.get(keyOf(tenant, name));
    return entry && decode(entry);
  }

  async list(tenant: string): Promise<AgentRecord[]> {
    return (await this.kv.list(`${keyToken(tenant)}.`)).map(decode);
  }

  async update(tenant: string, record: AgentRecord): Promise<boolean> {
    return this.change(keyOf(tenant, record.name), (expected) =>
      this.kv.put(keyOf(tenant, record.name), JSON.stringify(record), { expected }),
    );
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return this.change(keyOf(tenant, name), (expected) => this.kv.delete(keyOf(tenant, name), { expected }));
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  /** Applies `write` on the key's current revision; false when the agent does not exist. */
  private async change(key: string, write: (expected: number) => Promise<unknown>): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.kv.get(key);
      if (!entry) return false;
      try {
        await write(entry.revision);
        return true;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }
}
