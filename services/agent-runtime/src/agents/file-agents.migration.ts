import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentRecord, AgentStore } from '#agent-registry';

/**
 * Moves the agents an earlier embedded version kept as one JSON file per tenant (`<dataDir>/agent-registry/`) into the
 * registry; a tenant's file is removed only once the registry holds all of its agents, so an interrupted move is
 * finished by the next start. An agent already in the registry keeps the registry's record. Returns how many moved.
 */
export async function moveFileAgents(dataDir: string, registry: AgentStore): Promise<number> {
  const dir = join(dataDir, 'agent-registry');
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) =>
    err.code === 'ENOENT' ? [] : Promise.reject(err),
  );
  let moved = 0;
  for (const name of names.filter((n) => n.endsWith('.json') && !n.startsWith('.'))) {
    const tenant = decodeURIComponent(name.slice(0, -'.json'.length));
    const table = JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, AgentRecord>;
    for (const record of Object.values(table)) {
      await registry.create(tenant, record);
      moved++;
    }
    await rm(join(dir, name), { force: true });
  }
  return moved;
}
