import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeOsSandbox } from '#testing';
import { OsSandbox, SandboxPaths, sandboxUser } from './os-sandbox.js';

/**
 * What untrusted code could do if the inner layer (Node's permission model, the bootstrap) fell: run plain Node in the
 * sandbox.
 */
const PROBE = `
import fs from 'node:fs';
import net from 'node:net';
const [, , hostPort, otherTenant, skillDir] = process.argv;
const attempt = (fn) => { try { return fn(); } catch (err) { return err.code ?? err.message; } };
const connect = () => new Promise((resolve) => {
  const socket = net.connect(Number(hostPort), '127.0.0.1');
  socket.on('connect', () => { socket.destroy(); resolve('connected'); });
  socket.on('error', (err) => resolve(err.code));
});
console.log(JSON.stringify({
  connect: await connect(),
  pids: fs.readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).length,
  environ: attempt(() => fs.readFileSync('/proc/1/environ', 'utf8').split('\\0').filter(Boolean)),
  otherTenant: attempt(() => fs.readdirSync(otherTenant)),
  writeSkill: attempt(() => fs.writeFileSync(skillDir + '/execute.ts', 'x')),
  etcShadow: attempt(() => fs.readFileSync('/etc/shadow', 'utf8').length),
  uid: process.getuid(),
  caps: fs.readFileSync('/proc/self/status', 'utf8').match(/CapEff:\\s+(\\w+)/)[1],
}));
`;

describeOsSandbox('OsSandbox (the kernel layer alone)', () => {
  let root: string;
  let server: Server;
  let hostPort = 0;
  let connections = 0;

  beforeAll(async () => {
    // mkdtemp makes a 0700 folder: the sandbox's user (another kernel user when the tests run as root) cannot pass it.
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'alfred-os-')));
    for (const dir of ['skill', 'tenants/a', 'tenants/b'])
      await mkdir(path.join(root, dir), { recursive: true, mode: 0o755 });
    await writeFile(path.join(root, 'skill', 'probe.mjs'), PROBE);
    await writeFile(path.join(root, 'tenants', 'b', 'secret.txt'), 'tenant b');
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hostPort = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  it('should give code that escaped Node no network, no host processes, no other tenant, no capability', async () => {
    const nodeDir = path.dirname(await realpath(process.execPath));
    const { file, args } = new OsSandbox().command({
      command: [
        `${SandboxPaths.node}/${path.basename(process.execPath)}`,
        '/skill/probe.mjs',
        String(hostPort),
        path.join(root, 'tenants', 'b'),
        '/skill',
      ],
      mounts: [
        { path: nodeDir, mode: 'ro', target: SandboxPaths.node },
        { path: path.join(root, 'skill'), mode: 'ro', target: SandboxPaths.skill },
        { path: path.join(root, 'tenants', 'a'), mode: 'rw', target: '/data/self' },
      ],
      cwd: SandboxPaths.skill,
      tenant: 'a',
      kind: 'skill',
      tmpfsMb: 8,
      limits: { addressSpaceMb: 2048, processes: 512, cpuSeconds: 10, fileSizeBytes: 1024 * 1024, openFiles: 64 },
    });
    process.env.ALFRED_FAKE_SERVICE_SECRET = 'service-only';
    const out = await new Promise<string>((resolve, reject) =>
      execFile(file, args, { env: { PATH: '/usr/bin:/bin' } }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr || err.message)) : resolve(stdout),
      ),
    ).finally(() => delete process.env.ALFRED_FAKE_SERVICE_SECRET);
    const seen = JSON.parse(out);
    expect(seen.connect).toBe('ECONNREFUSED');
    expect(connections).toBe(0);
    expect(seen.pids).toBeLessThanOrEqual(3);
    expect(JSON.stringify(seen.environ)).not.toContain('service-only');
    expect(seen.otherTenant).toBe('ENOENT');
    expect(['EROFS', 'EACCES']).toContain(seen.writeSkill);
    expect(seen.etcShadow).toBe('ENOENT');
    expect(seen.uid).toBe(65534);
    expect(seen.caps).toBe('0000000000000000');
  }, 30_000);

  it('should write into a data folder under a 0700 folder at start-up, and name a folder it cannot use', async () => {
    const data = path.join(root, 'private', 'data');
    await mkdir(data, { recursive: true, mode: 0o700 });
    expect(await OsSandbox.probe('bwrap', data)).toEqual({ available: true });
    const blocked = path.join(root, 'skill', 'probe.mjs', 'data');
    const status = await OsSandbox.probe('bwrap', blocked);
    expect(status.available).toBe(false);
    expect(status.reason).toContain(`sandboxes cannot use ${blocked}`);
    expect(status.reason).toMatch(/give Alfred a data folder/);
  }, 30_000);

  /** Runs a shell in tenant `a`'s bash sandbox and answers its stdout. */
  const shell = (script: string, processes: number) => {
    const { file, args } = new OsSandbox().command({
      command: ['/bin/sh', '-c', script],
      mounts: [],
      cwd: '/',
      tenant: 'a',
      kind: 'bash',
      tmpfsMb: 1,
      limits: { addressSpaceMb: 512, processes, cpuSeconds: 10, fileSizeBytes: 1024 * 1024, openFiles: 64 },
    });
    return new Promise<string>((resolve, reject) =>
      execFile(file, args, { env: { PATH: '/usr/bin:/bin' } }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr || err.message)) : resolve(stdout),
      ),
    );
  };

  it("should count the process limit in the sandbox alone, not its user's (containers share users)", async () => {
    // The sandbox's own kernel user when the service is root; the service's user otherwise.
    const uid = sandboxUser('a', 'bash')?.uid ?? process.getuid!();
    // Forty processes of the same kernel user outside the sandbox: what other containers running as that user add up
    // to.
    const others = Array.from({ length: 40 }, () => execFile('sleep', ['20'], { uid, gid: uid }));
    try {
      expect((await shell('echo started', 16)).trim()).toBe('started');
      // The limit still holds inside: the shell's 30 children against 16 end in a refused fork.
      await expect(shell('for i in $(seq 1 30); do sleep 3 & done; echo all started', 16)).rejects.toThrow(
        /Cannot fork/,
      );
      expect((await shell('for i in $(seq 1 8); do sleep 1 & done; wait; echo eight', 16)).trim()).toBe('eight');
    } finally {
      for (const child of others) child.kill('SIGKILL');
    }
  }, 30_000);
});
