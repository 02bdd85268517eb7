import { z } from 'zod';
import { SKILL_INSTALL_GIT_TIMEOUT_MAX_MS } from '#contracts';
import { envHelpers } from '#config';

const hostList = z.string().transform((raw) =>
  raw
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean),
);

/** Environment variables of installs from git, spread into the skill-registry's env schema. */
export const skillInstallEnv = {
  ALFRED_SKILLS_INSTALL_LOCAL: envHelpers.bool
    .default(false)
    .describe("skills from git: `file://` and local paths (the registry's own disk) as sources"),
  ALFRED_SKILLS_INSTALL_SSH_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('skills from git: a private key for `ssh://` sources (refused without it)'),
  ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS: z
    .string()
    .min(1)
    .optional()
    .describe(
      'skills from git: the known_hosts file `ssh://` host keys are checked against (unknown hosts are refused)',
    ),
  ALFRED_SKILLS_INSTALL_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe('skills from git: extra certificate authorities (PEM) for `https://` sources'),
  ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS: hostList
    .default([])
    .describe(
      'skills from git: hosts allowed to resolve to private, loopback or link-local addresses (comma-separated)',
    ),
  ALFRED_SKILLS_INSTALL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(SKILL_INSTALL_GIT_TIMEOUT_MAX_MS)
    .default(120_000)
    .describe("skills from git: time limit of one source's fetch (resolve, fetch, read)"),
  ALFRED_SKILLS_INSTALL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(100 * 1024 * 1024)
    .describe('skills from git: largest repository data fetched for one source (413 above)'),
  ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024)
    .describe('skills from git: largest file of an installed skill'),
  ALFRED_SKILLS_INSTALL_MAX_SKILL_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(8 * 1024 * 1024)
    .describe('skills from git: largest skill folder (all its files)'),
};

export interface SkillInstallConfig {
  readonly ALFRED_DATA_DIR: string;
  readonly ALFRED_SKILLS_INSTALL_LOCAL: boolean;
  readonly ALFRED_SKILLS_INSTALL_SSH_KEY?: string | undefined;
  readonly ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS?: string | undefined;
  readonly ALFRED_SKILLS_INSTALL_CA_FILE?: string | undefined;
  readonly ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS: readonly string[];
  readonly ALFRED_SKILLS_INSTALL_TIMEOUT_MS: number;
  readonly ALFRED_SKILLS_INSTALL_MAX_BYTES: number;
  readonly ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES: number;
  readonly ALFRED_SKILLS_INSTALL_MAX_SKILL_BYTES: number;
}
