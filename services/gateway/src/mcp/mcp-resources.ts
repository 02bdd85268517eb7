import { createHash } from 'node:crypto';
import { allows } from '#agent-tools';
import { ErrorCode, SkillRoutes, type NamePatterns, type SkillResourceContent } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { AlfredError } from '#errors';

export const SKILL_URI_TEMPLATE = 'skill://{name}/{+path}';
const READ_CONCURRENCY = 8;

/** `skill://<name>/<path>`, the path percent-encoded per segment. */
export function skillUri(name: string, path: string): string {
  return `skill://${name}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

export function parseSkillUri(uri: string): { name: string; path: string } {
  const match = /^skill:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match)
    throw new AlfredError(ErrorCode.BadRequest, `not a skill resource URI: ${uri} (expected ${SKILL_URI_TEMPLATE})`);
  try {
    return { name: decodeURIComponent(match[1]!), path: match[2]!.split('/').map(decodeURIComponent).join('/') };
  } catch {
    throw new AlfredError(ErrorCode.BadRequest, `malformed percent-encoding in ${uri}`);
  }
}

function sha256(file: SkillResourceContent): string {
  return createHash('sha256')
    .update(Buffer.from(file.content, file.encoding === 'utf8' ? 'utf8' : 'base64'))
    .digest('hex');
}

function mimeTypeOf(path: string, encoding: SkillResourceContent['encoding']): string {
  if (path.endsWith('.md')) return 'text/markdown';
  if (path.endsWith('.json')) return 'application/json';
  return encoding === 'utf8' ? 'text/plain' : 'application/octet-stream';
}

/** Skills as MCP resources: each skill's SKILL.md and its files, read through the registry, with SHA-256 digests. */
export class SkillResources {
  constructor(
    private readonly bus: Bus,
    private readonly context: MessageContext,
    private readonly tenant: string,
    /** The calling agent's skill policy: other skills are neither listed nor read. */
    private readonly only?: NamePatterns,
  ) {}

  async list() {
    const index = await this.bus.request(
      SkillRoutes.index,
      { tenant: this.tenant, ...(this.only ? { only: this.only } : {}) },
      { context: this.context },
    );
    const files = (
      await Promise.all(
        index.skills.map(async (skill) => {
          const { resources } = await this.bus.request(
            SkillRoutes.resources,
            { tenant: this.tenant, name: skill.name },
            { context: this.context },
          );
          return ['SKILL.md', ...resources.map((r) => r.path)].map((path) => ({
            skill: skill.name,
            description: skill.description,
            path,
          }));
        }),
      )
    ).flat();
    const resources = [];
    for (let i = 0; i < files.length; i += READ_CONCURRENCY) {
      const batch = files.slice(i, i + READ_CONCURRENCY);
      resources.push(
        ...(await Promise.all(
          batch.map(async (f) => {
            const file = await this.read_(f.skill, f.path);
            return {
              uri: skillUri(f.skill, f.path),
              name: `${f.skill}/${f.path}`,
              ...(f.path === 'SKILL.md' ? { description: f.description } : {}),
              mimeType: mimeTypeOf(f.path, file.encoding),
              size: file.size,
              _meta: { sha256: sha256(file) },
            };
          }),
        )),
      );
    }
    return { resources };
  }

  async read(uri: string) {
    const { name, path } = parseSkillUri(uri);
    if (!allows({ skills: this.only }, 'skill', name)) {
      const why = 'its policy does not permit the skill';
      throw new AlfredError(ErrorCode.NotFound, `no skill resource ${uri} for this agent (${why})`);
    }
    const file = await this.read_(name, path);
    const body = file.encoding === 'utf8' ? { text: file.content } : { blob: file.content };
    return {
      contents: [
        { uri, mimeType: mimeTypeOf(path, file.encoding), ...body, _meta: { sha256: sha256(file), size: file.size } },
      ],
    };
  }

  private read_(name: string, path: string): Promise<SkillResourceContent> {
    return this.bus.request(SkillRoutes.resource, { tenant: this.tenant, name, path }, { context: this.context });
  }
}
