import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One import as it runs: from a repository file to another file, or to a package (`pkg:<name>`). */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  /** `import()`: loaded when the code path runs, not when the importing module loads. */
  readonly dynamic: boolean;
}

/** Test suites and their helpers beside production code: not part of what a process loads. */
const TEST_ONLY = /(\.spec|\.int-spec|\.e2e-spec|\.contract)\.ts$|\/testing\/|^libs\/testing\//;

/** A node's builtins and a package's name (its scope included), from an import specifier. */
function packageOf(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * The import graph of the repository's TypeScript as it runs: each file is compiled the way the tests compile it
 * (swc, decorator metadata kept), so imports of types only are gone and what is left is what Node loads. `#lib`
 * specifiers resolve through package.json's `imports` (the source condition), relative ones to their `.ts` file.
 */
export class ImportGraph {
  private readonly edges = new Map<string, ImportEdge[]>();

  private constructor(
    readonly root: string,
    private readonly aliases: Readonly<Record<string, string>>,
    private readonly compile: (path: string) => string,
    private readonly lex: (code: string) => Array<{ n?: string; d: number }>,
  ) {}

  static async load(root: string): Promise<ImportGraph> {
    const [{ transformSync }, lexer] = await Promise.all([import('@swc/core'), import('es-module-lexer')]);
    await lexer.init;
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      imports: Record<string, { 'alfred-source': string }>;
    };
    const aliases = Object.fromEntries(
      Object.entries(pkg.imports).map(([k, v]) => [k, relative(root, resolve(root, v['alfred-source']))]),
    );
    const compile = (path: string) =>
      transformSync(readFileSync(join(root, path), 'utf8'), {
        filename: path,
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'es6' },
      }).code;
    const lex = (code: string) => lexer.parse(code)[0] as unknown as Array<{ n?: string; d: number }>;
    return new ImportGraph(root, aliases, compile, lex);
  }

  /** Every production file (test suites and test helpers left out) under `dir`, relative to the root. */
  productionFiles(dir: string): string[] {
    return readdirSync(join(this.root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      .map((e) => relative(this.root, join(e.parentPath, e.name)))
      .filter((f) => !TEST_ONLY.test(f))
      .sort();
  }

  /** What a file imports as it runs. */
  importsOf(file: string): readonly ImportEdge[] {
    let found = this.edges.get(file);
    if (found) return found;
    found = this.lex(this.compile(file))
      .filter((i): i is { n: string; d: number } => i.n !== undefined)
      .map((i) => ({ from: file, to: this.resolveSpecifier(file, i.n), dynamic: i.d > -1 }));
    this.edges.set(file, found);
    return found;
  }

  /** Every file and package reachable from `entry`, each with the import that first reached it (breadth first). */
  reach(entry: string, options: { dynamic?: boolean } = {}): Map<string, ImportEdge | undefined> {
    const reached = new Map<string, ImportEdge | undefined>([[entry, undefined]]);
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const edge of this.importsOf(file)) {
        if ((edge.dynamic && options.dynamic === false) || reached.has(edge.to)) continue;
        reached.set(edge.to, edge);
        if (!edge.to.startsWith('pkg:')) queue.push(edge.to);
      }
    }
    return reached;
  }

  /** The chain of imports by which `reach` got to `target`, as `a.ts -> b.ts -> pkg:x`. */
  static chain(reached: Map<string, ImportEdge | undefined>, target: string): string {
    const links: string[] = [];
    for (let node: string | undefined = target; node !== undefined; node = reached.get(node)?.from) {
      links.unshift(reached.get(node)?.dynamic ? `${node} (import())` : node);
    }
    return links.join(' -> ');
  }

  private resolveSpecifier(from: string, specifier: string): string {
    const alias = this.aliases[specifier];
    if (alias) return alias;
    if (!specifier.startsWith('.')) return `pkg:${packageOf(specifier)}`;
    const target = join(dirname(from), specifier);
    for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts'), target]) {
      if (existsSync(join(this.root, candidate))) return candidate;
    }
    throw new Error(`${from} imports ${specifier}, which resolves to no file`);
  }
}
