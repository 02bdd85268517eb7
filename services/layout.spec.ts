import { existsSync, readdirSync, readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const dirs = (path: string) => readdirSync(new URL(path, root), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

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
    const expected = [...dirs('services').map((d) => `application services/${d}`), ...dirs('libs').map((d) => `library libs/${d}`)].sort();
    expect(Object.values(cli.projects).map((p) => `${p.type} ${p.root}`).sort()).toEqual(expected);
    for (const [name, p] of Object.entries(cli.projects)) {
      expect(`${name} ${existsSync(new URL(`${p.sourceRoot}/${p.entryFile}.ts`, root))}`).toBe(`${name} true`);
    }
  });
});
