import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, ExecutableSkillRoutes, SkillManifest, type SkillFiles } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { AlfredError } from '#errors';
import { skillDigest } from '#sandbox';

/** A skill version ready to run: its cached folder and its manifest. */
export interface CachedSkill {
  readonly dir: string;
  readonly manifest: SkillManifest;
}

/**
 * Skill folders by digest on the runner's own disk. A miss asks the registry for exactly that version's
 * files over the bus; the folder is written aside, its digest checked, then moved into place.
 */
export class SkillFilesCache {
  private readonly ready = new Map<string, Promise<CachedSkill>>();

  constructor(
    private readonly bus: Bus,
    private readonly cacheDir: string,
  ) {}

  get(tenant: string, id: string, digest: string, context?: MessageContext): Promise<CachedSkill> {
    let cached = this.ready.get(digest);
    if (!cached) {
      cached = this.load(tenant, id, digest, context);
      this.ready.set(digest, cached);
      cached.catch(() => this.ready.delete(digest));
    }
    return cached;
  }

  private async load(tenant: string, id: string, digest: string, context?: MessageContext): Promise<CachedSkill> {
    const dir = path.join(this.cacheDir, digest.replace(/^sha256:/, ''));
    if (!(await stat(dir).catch(() => undefined))) {
      const files = await this.bus.request(
        ExecutableSkillRoutes.files,
        { tenant, id, digest },
        { ...(context ? { context } : {}) },
      );
      await this.write(dir, files);
    }
    const manifest = SkillManifest.parse(JSON.parse(await readFile(path.join(dir, 'skill.json'), 'utf8')));
    if (manifest.id !== id)
      throw new AlfredError(ErrorCode.Internal, `cached skill ${digest} is ${manifest.id}, not ${id}`);
    return { dir, manifest };
  }

  private async write(dir: string, skill: SkillFiles): Promise<void> {
    await mkdir(this.cacheDir, { recursive: true });
    const staging = path.join(this.cacheDir, `.staging-${randomUUID()}`);
    try {
      for (const file of skill.files) {
        const target = path.resolve(staging, file.path);
        if (!target.startsWith(staging + path.sep))
          throw new AlfredError(ErrorCode.Internal, `skill file path ${file.path} escapes its folder`);
        await mkdir(path.dirname(target), { recursive: true });
        await writeFile(target, Buffer.from(file.content, file.encoding === 'utf8' ? 'utf8' : 'base64'));
      }
      const actual = await skillDigest(staging);
      if (actual !== skill.digest)
        throw new AlfredError(ErrorCode.Internal, `skill ${skill.id} files hash to ${actual}, not ${skill.digest}`);
      await rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
        // Another execution cached the same version first: theirs is identical.
        if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
}
