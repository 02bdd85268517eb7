import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '#logging';
import { HashingEmbedder } from '#embeddings';
import { SkillCatalog } from '#skills';
import { LanceDbStore } from '#vector-store';
import { startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { SkillRegistryService } from '../services/skill-registry/src/skill-registry.service.js';
import { openSkillCollection, SkillSearchRepository } from '../services/skill-registry/src/skill-search.repository.js';
import { load, round, timeSequential, type BenchRow } from './load.js';

const SECTION = 'skills';
const WORDS = [
  'invoice',
  'deploy',
  'garden',
  'review',
  'ledger',
  'kotlin',
  'coffee',
  'release',
  'schema',
  'backup',
  'holiday',
  'report',
];

/** `count` skill folders under `<root>`, each a SKILL.md of ~40 lines plus one reference file. */
async function generateSkills(root: string, count: number): Promise<void> {
  const writes: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const name = `gen-skill-${String(i).padStart(4, '0')}`;
    const w = (k: number) => WORDS[(i * k) % WORDS.length];
    const description =
      `Handle ${w(1)} and ${w(3)} tasks for team ${i % 17}. Use when the user mentions ` +
      `${w(5)} work or asks about ${w(7)} ${i}.`;
    const body = Array.from({ length: 40 }, (_, line) => `${line + 1}. Step about ${w(line + 2)} for skill ${i}.`).join(
      '\n',
    );
    const dir = join(root, name);
    writes.push(
      mkdir(join(dir, 'references'), { recursive: true }).then(async () => {
        await writeFile(
          join(dir, 'SKILL.md'),
          `---\nname: ${name}\ndescription: "${description}"\nlicense: MIT\n---\n# ${name}\n\n${body}\n`,
        );
        await writeFile(join(dir, 'references', 'notes.md'), `Notes for ${name}.\n`);
      }),
    );
  }
  await Promise.all(writes);
}

const timedRow = (name: string, t: { p50: number; p99: number; mean: number }, note: string): BenchRow => ({
  section: SECTION,
  name,
  mode: 'in-process',
  connections: 1,
  rps: Math.round(1000 / t.mean),
  p50: t.p50,
  p99: t.p99,
  errors: 0,
  note,
});

/** Discovery (catalog reload) and search indexing of the generated skills, and level-1 rendering. */
async function catalogRows(root: string, count: number, quick: boolean): Promise<BenchRow[]> {
  const catalog = new SkillCatalog({ roots: [{ dir: root, source: 'project' }] });
  const rows: BenchRow[] = [];
  const discovery = await timeSequential(quick ? 3 : 10, () => catalog.reload());
  rows.push(timedRow(`discover ${count} skills (parse, validate, digest)`, discovery, 'target p50 < 1000 ms'));
  if (catalog.list().length !== count) throw new Error(`expected ${count} skills, found ${catalog.list().length}`);

  const storeDir = await mkdtemp(join(tmpdir(), 'alfred-bench-skills-store-'));
  const store = new LanceDbStore({ dir: storeDir });
  try {
    const embedder = new HashingEmbedder();
    const repo = new SkillSearchRepository(await openSkillCollection(store, embedder.id, embedder.dimension));
    const service = new SkillRegistryService(catalog, repo, embedder, { projectSkillsDir: root });
    const started = performance.now();
    await service.start(false);
    const full = round(performance.now() - started);
    rows.push({
      section: SECTION,
      name: `discover + search-index ${count} skills (hash embedder, LanceDB)`,
      mode: 'in-process',
      connections: 1,
      rps: 0,
      p50: full,
      p99: full,
      errors: 0,
      note: 'one cold run; target < 1000 ms',
    });
    const again = await timeSequential(quick ? 3 : 10, () => service.reload('bench'));
    rows.push(
      timedRow(`reload ${count} unchanged skills (no re-embedding)`, again, 'digests compared, nothing embedded'),
    );
    await service.close();
  } finally {
    await store.close();
    await rm(storeDir, { recursive: true, force: true });
  }

  const times = quick ? 100 : 500;
  // Warm up (JIT) so the rows measure steady-state rendering.
  for (let i = 0; i < 20; i++) {
    catalog.renderIndexMarkdown();
    catalog.renderIndexXml({ budget: 16_000 });
  }
  rows.push(
    timedRow(
      `render markdown index, ${count} skills, no budget`,
      await timeSequential(times, async () => catalog.renderIndexMarkdown()),
      'target p99 < 5 ms',
    ),
  );
  rows.push(
    timedRow(
      `render XML index, ${count} skills, no budget`,
      await timeSequential(times, async () => catalog.renderIndexXml()),
      'target p99 < 5 ms',
    ),
  );
  rows.push(
    timedRow(
      `render XML index, ${count} skills, 16k budget`,
      await timeSequential(times, async () => catalog.renderIndexXml({ budget: 16_000 })),
      'shortens then drops; target p99 < 5 ms',
    ),
  );
  await catalog.close();
  return rows;
}

/** Level 2 through the gateway on the embedded default, with the generated skills in the project root. */
async function gatewayRows(project: string, logger: Logger, quick: boolean): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-skills-'));
  const env = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ALFRED_PROJECT_DIR: project,
    ALFRED_HOME_DIR: dataDir,
    ALFRED_SKILLS_WATCH: 'false',
  };
  const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
  try {
    const url = `${alfred.url}/skills/gen-skill-0500`;
    const check = await fetch(url);
    if (check.status !== 200) throw new Error(`${url}: ${check.status}`);
    await check.text();
    await timeSequential(200, () => fetch(url).then((r) => r.text()));
    const t = await timeSequential(quick ? 1000 : 5000, () => fetch(url).then((r) => r.text()));
    return [
      { ...timedRow('GET /skills/{name} (level 2), sequential', t, 'target p99 < 2 ms'), mode: 'embedded' },
      await load(SECTION, 'GET /skills/{name} (level 2)', 'embedded', { url, connections: 1 }),
      await load(SECTION, 'GET /skills/{name} (level 2)', 'embedded', { url, connections: 16 }),
      await load(SECTION, 'GET /skills/search', 'embedded', {
        url: `${alfred.url}/skills/search?q=ledger%20review%20team%203`,
        connections: 1,
      }),
    ];
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function skillsBench(ctx: { logger: Logger; quick: boolean }): Promise<BenchRow[]> {
  const base = await mkdtemp(join(tmpdir(), 'alfred-bench-skills-gen-'));
  const project = join(base, 'project');
  const root = join(project, '.alfred', 'skills');
  try {
    await generateSkills(root, 1000);
    return [...(await catalogRows(root, 1000, ctx.quick)), ...(await gatewayRows(project, ctx.logger, ctx.quick))];
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
