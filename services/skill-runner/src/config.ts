import { resolve } from 'node:path';
import { z } from 'zod';
import { baseEnv, osSandboxEnv, parseEnv } from '#config';
import { SkillEnvName } from '#contracts';

/** `NAME=value,NAME2=value` or a JSON object of strings; names follow the manifest's env rule. */
const secrets = z
  .string()
  .transform((raw, ctx): Record<string, string> => {
    const text = raw.trim();
    if (text.startsWith('{')) {
      try {
        return JSON.parse(text) as Record<string, string>;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'ALFRED_SKILL_SECRETS looks like JSON but does not parse' });
        return z.NEVER;
      }
    }
    const pairs = text.split(',').filter((p) => p.trim() !== '');
    return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')).trim(), p.slice(p.indexOf('=') + 1)]));
  })
  .pipe(z.record(SkillEnvName, z.string(), { error: 'secrets are NAME=value pairs with UPPER_SNAKE_CASE names' }));

const grants = z
  .string()
  .transform((raw): Record<string, string[] | '*'> => {
    const entries = raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const at = p.indexOf('=');
        const tenants = p
          .slice(at + 1)
          .split('|')
          .map((t) => t.trim())
          .filter(Boolean);
        return [p.slice(0, at).trim(), tenants.includes('*') ? '*' : tenants] as const;
      });
    return Object.fromEntries(entries);
  })
  .pipe(
    z.record(SkillEnvName, z.union([z.literal('*'), z.array(z.string().min(1)).min(1)]), {
      error: 'grants are NAME=tenant1|tenant2 (or NAME=*) pairs',
    }),
  );

export const skillRunnerEnvSchema = z.object({
  ...baseEnv,
  ...osSandboxEnv,
  ALFRED_SKILL_SECRETS: secrets
    .default({})
    .describe(
      '`NAME=value,NAME2=value` (or a JSON object): the only source of the values skills may receive as environment ' +
        'variables (manifest `permissions.env`)',
    ),
  ALFRED_SKILL_SECRET_GRANTS: grants
    .default({})
    .describe(
      "`NAME=tenant1|tenant2,NAME2=*`: which tenants' skills may receive each secret (a secret granted to none " +
        'reaches none)',
    ),
  ALFRED_SKILL_WARM_POOL: z.coerce
    .number()
    .int()
    .min(0)
    .max(16)
    .default(4)
    .describe('warm processes kept per skill version (same id and digest only); 0 starts every run cold'),
  ALFRED_SKILL_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(8)
    .describe(
      'executions a skill-runner runs at once; more wait, taking turns by tenant (scale out with more runners)',
    ),
  ALFRED_SKILL_TENANT_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .meta({ description: 'of those, how many one tenant may hold', shownDefault: 'half, at least 1' }),
  ALFRED_TENANT_SKILL_DATA_QUOTA_MB: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_048_576)
    .default(1024)
    .describe("disk one tenant's skill data (`self`, `shared/*`) may hold; past it `ctx.writeFile` throws"),
});
export type SkillRunnerConfig = z.output<typeof skillRunnerEnvSchema>;

export function loadSkillRunnerConfig(env: NodeJS.ProcessEnv): SkillRunnerConfig {
  return parseEnv(skillRunnerEnvSchema, env);
}

/** How many of the runner's slots one tenant may hold. */
export function tenantShareOf(config: SkillRunnerConfig): number {
  return Math.min(
    config.ALFRED_SKILL_CONCURRENCY,
    config.ALFRED_SKILL_TENANT_CONCURRENCY ?? Math.max(1, Math.ceil(config.ALFRED_SKILL_CONCURRENCY / 2)),
  );
}

/** The runner's own disk: skill files cached by digest, and the skills' data roots. Never the registry's. */
export function runnerDirsOf(config: SkillRunnerConfig): { cacheDir: string; dataRoot: string } {
  const base = resolve(config.ALFRED_DATA_DIR, 'skill-runner');
  return { cacheDir: resolve(base, 'cache'), dataRoot: resolve(base, 'data') };
}
