import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeOsSandbox } from '#testing';
import { DiskQuota, measureDisk } from '../quota/disk-quota.js';
import { SANDBOX_TEST_TIMEOUT_MS } from '../testing/skill-fixtures.js';
import { BashSandbox } from './bash-sandbox.js';

const MiB = 1024 * 1024;

// The file size limit is the kernel's (prlimit inside bubblewrap): without the OS sandbox only the folder check runs.
describeOsSandbox(`${BashSandbox.name} with disk quotas`, () => {
  let root: string;
  let sandbox: BashSandbox;
  const quota = new DiskQuota({ folderBytes: 32 * MiB, tenantBytes: 48 * MiB });

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'alfred-bash-quota-'));
    sandbox = new BashSandbox({ mode: 'required', quota });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const workspace = async (agent: string) => {
    const dir = path.join(root, 'workspaces', 'tenant-q', agent);
    await mkdir(dir, { recursive: true });
    return dir;
  };
  const bash = (dir: string, command: string) =>
    sandbox.run({
      command,
      workspace: dir,
      tenant: 'tenant-q',
      env: {},
      apiUrl: 'http://127.0.0.1:9',
      timeoutMs: 20_000,
      maxOutputChars: 10_000,
      signal: new AbortController().signal,
    });

  it(
    'should refuse a file past the remaining quota with "File too large", keeping what was written',
    async () => {
      const dir = await workspace('single');
      const run = await bash(dir, 'head -c 100M /dev/zero > big; echo "exit $?"');
      expect(run.output).toMatch(/File too large|exit 1/);
      const size = (await stat(path.join(dir, 'big'))).size;
      expect(size).toBeGreaterThan(16 * MiB);
      expect(size).toBeLessThanOrEqual(32 * MiB + 8 * MiB);
      expect(run.quotaNote).toMatch(/disk quota: this workspace use .* of 32\.0 MiB; delete files to free space/);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should stop a call that writes many files past the quota, and refuse every write of the next call',
    async () => {
      const dir = await workspace('many');
      const run = await bash(
        dir,
        'for i in $(seq 1 100); do head -c 2M /dev/zero > f$i || exit 9; done; echo finished',
      );
      expect(run.output).not.toContain('finished');
      expect(run.stopped === 'quota' || run.code === 9).toBe(true);
      const used = await measureDisk(dir);
      // The margin, plus what a loaded machine lets through between two checks of the folder.
      expect(used).toBeLessThanOrEqual(32 * MiB + 8 * MiB + 32 * MiB);
      const kept = await readFile(path.join(dir, 'f1'));
      expect(kept.length).toBe(2 * MiB);

      const next = await bash(dir, 'echo hello > note.txt; echo "exit $?"; cat f1 | wc -c');
      expect(next.output).toMatch(/File too large/);
      expect(next.output).toContain(String(2 * MiB));
      expect(next.quotaNote).toMatch(/writes refused/);
      expect(await measureDisk(dir)).toBeLessThanOrEqual(used + 4096);

      // Deleting frees the space; the next call may write again (a call's limit is fixed when it starts).
      await bash(dir, 'rm -f f*');
      const freed = await bash(dir, 'echo again > note.txt && cat note.txt');
      expect(freed.output).toContain('again');
      expect(freed.quotaNote).toBeUndefined();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    "should count every workspace of the tenant against the tenant's quota",
    async () => {
      const first = await workspace('first');
      await bash(first, 'head -c 30M /dev/zero > data');
      const second = await workspace('second');
      const state = await quota.state(path.dirname(second), second);
      expect(state.tenant.used).toBeGreaterThanOrEqual(30 * MiB);
      expect(state.remaining).toBeLessThanOrEqual(18 * MiB);
      const run = await bash(second, 'head -c 30M /dev/zero > data; echo "exit $?"');
      expect(run.quotaNote).toMatch(/this tenant's workspaces use/);
      expect((await stat(path.join(second, 'data'))).size).toBeLessThanOrEqual(state.remaining + 8 * MiB);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );
});
