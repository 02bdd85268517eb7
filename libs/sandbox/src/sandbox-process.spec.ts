import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sandboxArgv } from './sandbox-command.js';
import { SANDBOX_TEST_TIMEOUT_MS } from './testing/skill-fixtures.js';

/** Runs a probe script under exactly the flags a skill gets, without the bootstrap's own lockdown. */
async function probe(argv: string[]): Promise<Record<string, string>> {
  const child = spawn(process.execPath, argv, { env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  await new Promise((resolve) => child.on('close', resolve));
  return JSON.parse(out) as Record<string, string>;
}

const PROBE = `
import fs from 'node:fs';
import cp from 'node:child_process';
import { Worker } from 'node:worker_threads';
const attempt = (fn) => { try { fn(); return 'allowed'; } catch (err) { return err.code ?? err.message; } };
const [, , own, sibling, data] = process.argv;
console.log(JSON.stringify({
  etcPasswd: attempt(() => fs.readFileSync('/etc/passwd')),
  sibling: attempt(() => fs.readFileSync(sibling)),
  ownFile: attempt(() => fs.readFileSync(own)),
  writeOwnFolder: attempt(() => fs.writeFileSync(own + '.new', 'x')),
  writeData: attempt(() => fs.writeFileSync(data, 'x')),
  writeTmp: attempt(() => fs.writeFileSync('/tmp/alfred-sandbox-escape', 'x')),
  childProcess: attempt(() => cp.execSync('id')),
  worker: attempt(() => new Worker('0', { eval: true })),
  addon: attempt(() => process.dlopen({ exports: {} }, '/nonexistent.node')),
  binding: attempt(() => process.binding('tcp_wrap')),
}));
`;

describe('sandboxArgv', () => {
  let root: string;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'alfred-flags-')));
    for (const dir of ['skills/own', 'skills/own-other', 'data/skill-data/own'])
      await mkdir(path.join(root, dir), { recursive: true });
    await writeFile(path.join(root, 'skills/own/probe.mjs'), PROBE);
    await writeFile(path.join(root, 'skills/own-other/secret.txt'), 'secret');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it(
    'should grant nothing but reads of the skill and its roots and writes to its write roots',
    async () => {
      const own = path.join(root, 'skills/own');
      const argv = sandboxArgv({
        bootstrapPath: path.join(own, 'probe.mjs'),
        skillDir: own,
        roots: { skill: own, self: path.join(root, 'data/skill-data/own') },
        readable: ['skill'],
        writable: ['self'],
        memoryMb: 32,
      });
      expect(argv.filter((flag) => /allow-(child-process|worker|addons|wasi|inspector)/.test(flag))).toEqual([]);
      const seen = await probe([
        ...argv,
        path.join(own, 'probe.mjs'),
        path.join(root, 'skills/own-other/secret.txt'),
        path.join(root, 'data/skill-data/own/out.txt'),
      ]);
      expect(seen).toEqual({
        etcPasswd: 'ERR_ACCESS_DENIED',
        sibling: 'ERR_ACCESS_DENIED',
        ownFile: 'allowed',
        writeOwnFolder: 'ERR_ACCESS_DENIED',
        writeData: 'allowed',
        writeTmp: 'ERR_ACCESS_DENIED',
        childProcess: 'ERR_ACCESS_DENIED',
        worker: 'ERR_ACCESS_DENIED',
        addon: 'ERR_DLOPEN_DISABLED',
        binding: 'ERR_ACCESS_DENIED',
      });
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should refuse paths that could widen a grant',
    () => {
      expect(() =>
        sandboxArgv({
          bootstrapPath: '/b/boot.ts',
          skillDir: '/skills/a,/etc',
          roots: { skill: '/skills/a,/etc' },
          readable: ['skill'],
          writable: [],
          memoryMb: 32,
        }),
      ).toThrow(/unusable sandbox path/);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );
});
