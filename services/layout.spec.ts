import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ImportGraph } from '#testing';

const root = new URL('..', import.meta.url);
const dirs = (path: string) =>
  readdirSync(new URL(path, root), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

/** nest-cli.json tells Nest's tooling the monorepo's layout: it must name every service and lib where it really is. */
describe('nest-cli.json', () => {
  const cli = JSON.parse(readFileSync(new URL('nest-cli.json', root), 'utf8')) as {
    monorepo: boolean;
    compilerOptions: { tsConfigPath: string };
    projects: Record<string, { type: string; root: string; sourceRoot: string; entryFile: string }>;
  };

  it('should list every service as an application and every lib as a library, each with its entry file', () => {
    expect(cli.monorepo).toBe(true);
    expect(existsSync(new URL(cli.compilerOptions.tsConfigPath, root))).toBe(true);
    const expected = [
      ...dirs('services').map((d) => `application services/${d}`),
      ...dirs('libs').map((d) => `library libs/${d}`),
    ].sort();
    expect(
      Object.values(cli.projects)
        .map((p) => `${p.type} ${p.root}`)
        .sort(),
    ).toEqual(expected);
    for (const [name, p] of Object.entries(cli.projects)) {
      expect(`${name} ${existsSync(new URL(`${p.sourceRoot}/${p.entryFile}.ts`, root))}`).toBe(`${name} true`);
    }
  });
});

/**
 * The layers of docs/architecture.md. A lib imports libs of the layers its own may import, never a service; the
 * kernel imports nothing above it. `testing` is test support: anything may be below it, no production file above it.
 */
const LAYERS = {
  kernel: ['contracts', 'errors', 'logging', 'retry', 'config', 'metrics', 'text', 'kv', 'files', 'ranking'],
  transport: ['bus', 'redis'],
  platform: [
    'durable',
    'runtime',
    'agent-registry',
    'agent-tools',
    'sessions',
    'agent-files',
    'content-safety',
    'skills',
  ],
  engine: ['vector-store', 'embeddings', 'llm', 'sandbox'],
} as const;
type Layer = keyof typeof LAYERS;
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  kernel: ['kernel'],
  transport: ['kernel'],
  platform: ['kernel', 'transport', 'platform'],
  engine: ['kernel', 'engine'],
};

/** Packages that are a storage or model engine, and the one lib whose files may import each. */
const ENGINE_PACKAGES: Record<string, string> = {
  '@lancedb/lancedb': 'vector-store',
  'apache-arrow': 'vector-store',
  '@qdrant/js-client-rest': 'vector-store',
  usearch: 'vector-store',
  '@huggingface/transformers': 'embeddings',
  'onnxruntime-node': 'embeddings',
  '@anthropic-ai/sdk': 'llm',
};

/** The engine libs each service owns: what its process may load, and nothing more. */
const SERVICE_ENGINES: Record<string, readonly string[]> = {
  gateway: [],
  memory: ['vector-store', 'embeddings'],
  'skill-registry': ['vector-store', 'embeddings', 'sandbox'],
  'skill-runner': ['sandbox'],
  'agent-runtime': ['llm', 'sandbox'],
  compactor: ['llm'],
  distiller: ['llm'],
  learner: ['llm'],
  channels: [],
};

const layerOf = (lib: string): Layer | undefined =>
  (Object.keys(LAYERS) as Layer[]).find((l) => (LAYERS[l] as readonly string[]).includes(lib));
/** `libs/<lib>/…` or `services/<service>/…` of a repository file; undefined for a package. */
const ownerOf = (path: string): { kind: 'libs' | 'services'; name: string } | undefined => {
  const [kind, name] = path.split('/');
  return (kind === 'libs' || kind === 'services') && name && !name.endsWith('.ts') ? { kind, name } : undefined;
};

describe('dependency direction', () => {
  let graph: ImportGraph;
  const libs = dirs('libs').filter((l) => l !== 'testing');
  const services = dirs('services');

  beforeAll(async () => {
    graph = await ImportGraph.load(fileURLToPath(root));
  });

  it('should give every lib a layer (docs/architecture.md), and the layers no lib twice', () => {
    const listed = Object.values(LAYERS).flat();
    expect([...listed].sort()).toEqual([...libs].sort());
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('should have each lib import only libs of the layers below or beside it, and never a service', () => {
    const wrong: string[] = [];
    for (const lib of libs) {
      const allowed = MAY_IMPORT[layerOf(lib)!];
      for (const file of graph.productionFiles(`libs/${lib}/src`)) {
        for (const edge of graph.importsOf(file)) {
          const target = ownerOf(edge.to);
          if (!target || target.name === lib) continue;
          const layer = target.kind === 'libs' ? layerOf(target.name) : undefined;
          if (layer && allowed.includes(layer)) continue;
          const to = target.kind === 'libs' ? (layer ?? 'test support') : 'a service';
          wrong.push(`${file} -> ${edge.to} (${layerOf(lib)} -> ${to})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should keep the libs free of cycles: no lib reaches back to itself through its imports', () => {
    const arrows = new Map<string, Set<string>>();
    for (const lib of libs) {
      const to = new Set<string>();
      for (const file of graph.productionFiles(`libs/${lib}/src`)) {
        for (const edge of graph.importsOf(file)) {
          const target = ownerOf(edge.to);
          if (target?.kind === 'libs' && target.name !== lib) to.add(target.name);
        }
      }
      arrows.set(lib, to);
    }
    const cycles: string[] = [];
    const visit = (lib: string, path: string[]) => {
      if (path.includes(lib)) return void cycles.push([...path.slice(path.indexOf(lib)), lib].join(' -> '));
      for (const next of arrows.get(lib) ?? []) visit(next, [...path, lib]);
    };
    for (const lib of libs) visit(lib, []);
    expect(cycles).toEqual([]);
  });

  it('should import each engine package only in the lib that wraps it', () => {
    const wrong: string[] = [];
    for (const dir of [...libs.map((l) => `libs/${l}/src`), ...services.map((s) => `services/${s}/src`)]) {
      if (!existsSync(new URL(dir, root))) continue;
      for (const file of graph.productionFiles(dir)) {
        for (const edge of graph.importsOf(file)) {
          const owner = ENGINE_PACKAGES[edge.to.slice('pkg:'.length)];
          if (owner && !file.startsWith(`libs/${owner}/`)) wrong.push(`${file} -> ${edge.to} (only libs/${owner} may)`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should have services import libs, never another service', () => {
    const wrong: string[] = [];
    for (const service of services.filter((s) => existsSync(new URL(`services/${s}/src`, root)))) {
      for (const file of graph.productionFiles(`services/${service}/src`)) {
        for (const edge of graph.importsOf(file)) {
          const target = ownerOf(edge.to);
          if (target?.kind === 'services' && target.name !== service) wrong.push(`${file} -> ${edge.to}`);
          if (target?.kind === 'libs' && target.name === 'testing') wrong.push(`${file} -> ${edge.to} (test support)`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should load in each service process only the engines that service owns (the gateway none)', () => {
    const hosted = services.filter((s) => existsSync(new URL(`services/${s}/src/main.ts`, root)));
    expect(Object.keys(SERVICE_ENGINES).sort()).toEqual(hosted.sort());
    const wrong: string[] = [];
    for (const [service, owned] of Object.entries(SERVICE_ENGINES)) {
      const reached = graph.reach(`services/${service}/src/main.ts`);
      for (const node of reached.keys()) {
        const lib = ownerOf(node);
        const pkg = node.startsWith('pkg:') ? node.slice('pkg:'.length) : undefined;
        const engine = pkg ? ENGINE_PACKAGES[pkg] : lib?.kind === 'libs' ? lib.name : undefined;
        if (!engine || !(LAYERS.engine as readonly string[]).includes(engine) || owned.includes(engine)) continue;
        // One line per engine: the first of its files (or packages) that the service reaches, and by which imports.
        const line = `${service} loads ${engine}: ${ImportGraph.chain(reached, node)}`;
        if (!wrong.some((w) => w.startsWith(`${service} loads ${engine}:`))) wrong.push(line);
      }
    }
    expect(wrong).toEqual([]);
  });
});
