import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskQuota } from '#sandbox';
import { OutsideWorkspaceError, Workspace, WorkspaceQuotaError, workspaceDirOf } from './workspace.js';

describe(Workspace.name, () => {
  let base: string;
  let ws: Workspace;

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'alfred-ws-'));
    ws = new Workspace(workspaceDirOf(join(base, 'workspaces'), { tenant: 't/../x', agent: 'jarvis' }));
    await mkdir(join(base, 'secret'), { recursive: true });
    await writeFile(join(base, 'secret', 'key.txt'), 'top secret');
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  describe('resolveExisting', () => {
    it('should resolve a relative path and the workspace spelled absolutely to the same real file', async () => {
      await writeFile(join(await ws.root(), 'a.txt'), 'a');
      expect(await ws.resolveExisting('a.txt')).toBe(join(await ws.root(), 'a.txt'));
      expect(await ws.resolveExisting(join(ws.dir, 'a.txt'))).toBe(join(await ws.root(), 'a.txt'));
    });

    it("should take /workspace/… (bash's name for it) as the workspace; refusals name no host folder", async () => {
      await writeFile(join(await ws.root(), 'a.txt'), 'a');
      expect(await ws.resolveExisting('/workspace/a.txt')).toBe(join(await ws.root(), 'a.txt'));
      expect(await ws.resolveForWrite('/workspace/sub/b.txt')).toBe(join(await ws.root(), 'sub', 'b.txt'));
      const refused = await ws.resolveExisting('/workspace/../etc/passwd').catch((err: Error) => err);
      expect(refused).toBeInstanceOf(OutsideWorkspaceError);
      expect((refused as Error).message).not.toContain(base);
    });

    it('should refuse .. and absolute paths that leave the workspace, whether or not they exist', async () => {
      await expect(ws.resolveExisting('../../../secret/key.txt')).rejects.toBeInstanceOf(OutsideWorkspaceError);
      await expect(ws.resolveExisting(join(base, 'secret', 'key.txt'))).rejects.toBeInstanceOf(OutsideWorkspaceError);
      await expect(ws.resolveExisting('../../nothing/here')).rejects.toBeInstanceOf(OutsideWorkspaceError);
    });

    it('should refuse a symlink that points out of the workspace', async () => {
      await symlink(join(base, 'secret'), join(await ws.root(), 'link'));
      await expect(ws.resolveExisting('link/key.txt')).rejects.toBeInstanceOf(OutsideWorkspaceError);
    });

    it('should keep the tenant segment inside the workspaces root', () => {
      expect(ws.dir).toBe(join(base, 'workspaces', 't%2F%2E%2E%2Fx', 'jarvis'));
    });
  });

  describe('resolveForWrite', () => {
    it('should create parent folders for a new file inside', async () => {
      const target = await ws.resolveForWrite('deep/er/new.txt');
      expect(target).toBe(join(await ws.root(), 'deep', 'er', 'new.txt'));
    });

    it('should refuse to write through a symlinked folder that points out', async () => {
      await symlink(join(base, 'secret'), join(await ws.root(), 'out'));
      await expect(ws.resolveForWrite('out/new.txt')).rejects.toBeInstanceOf(OutsideWorkspaceError);
      await expect(ws.resolveForWrite('out/sub/new.txt')).rejects.toBeInstanceOf(OutsideWorkspaceError);
    });
  });

  describe('admit', () => {
    it('should refuse a write past the disk quota, keep what is stored, and always let a file shrink', async () => {
      const limited = new Workspace(
        workspaceDirOf(join(base, 'workspaces'), { tenant: 't', agent: 'a' }),
        new DiskQuota({ folderBytes: 64 * 1024, tenantBytes: 1024 * 1024 }),
      );
      const file = await limited.resolveForWrite('data.txt');
      const write = (bytes: number) => limited.admit(file, bytes, () => writeFile(file, 'x'.repeat(bytes)));
      await write(40 * 1024);
      const refused = await write(100 * 1024).catch((err: Error) => err);
      expect(refused).toBeInstanceOf(WorkspaceQuotaError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          /write refused: it adds 61440 bytes past the disk quota: /.source +
            /this workspace use .* of 64\.0 KiB; delete files to free space/.source,
        ),
      );
      expect((await readFile(file, 'utf8')).length).toBe(40 * 1024);
      await write(1024);
      expect((await readFile(file, 'utf8')).length).toBe(1024);
    });
  });
});
