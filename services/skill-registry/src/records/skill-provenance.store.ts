import { join } from 'node:path';
import { NatsBus, NatsKvStore, type Bus } from '#bus';
import { FileKvStore } from '#files';
import { SKILL_PROVENANCE_BUCKET, SkillProvenanceRepository } from './skill-provenance.repository.js';

/**
 * Skill provenance where the registry keeps it: a NATS KV bucket every instance shares, or files under the data dir.
 */
export function skillProvenanceRepository(bus: Bus, dataDir: string): SkillProvenanceRepository {
  const kv =
    bus instanceof NatsBus
      ? new NatsKvStore(bus.nc, bus.stream(SKILL_PROVENANCE_BUCKET), { replicas: bus.replicas })
      : new FileKvStore(join(dataDir, 'kv', 'skill-provenance'));
  return new SkillProvenanceRepository(kv);
}
