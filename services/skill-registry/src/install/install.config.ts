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
  /** `file://` URLs and absolute local paths as sources (the registry's own disk): off unless set. */
  ALFRED_SKILLS_INSTALL_LOCAL: envHelpers.bool.default(false),
  /** A private key for `ssh://` sources; without it ssh sources are refused. */
  ALFRED_SKILLS_INSTALL_SSH_KEY: z.string().min(1).optional(),
  /** The known_hosts file ssh checks host keys against (required with the key: unknown hosts are refused). */
  ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS: z.string().min(1).optional(),
  /** Extra certificate authorities (PEM) for `https://` sources, e.g. an internal git server's. */
  ALFRED_SKILLS_INSTALL_CA_FILE: z.string().min(1).optional(),
  /** Hosts that may resolve to private, loopback or link-local addresses (an internal git server); none by default. */
  ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS: hostList.default([]),
  /** Time limit for fetching one source (resolve, fetch, read). */
  ALFRED_SKILLS_INSTALL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(SKILL_INSTALL_GIT_TIMEOUT_MAX_MS)
    .default(120_000),
  /** Largest repository data fetched for one source (the shallow pack); larger is refused (413). */
  ALFRED_SKILLS_INSTALL_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(100 * 1024 * 1024),
  /** Largest single file of an installed skill; a skill holding a larger one is refused. */
  ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 * 1024),
  /** Largest skill folder (all its files). */
  ALFRED_SKILLS_INSTALL_MAX_SKILL_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(8 * 1024 * 1024),
  /** The git binary. */
  ALFRED_SKILLS_INSTALL_GIT: z.string().min(1).default('git'),
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
  readonly ALFRED_SKILLS_INSTALL_GIT: string;
}
