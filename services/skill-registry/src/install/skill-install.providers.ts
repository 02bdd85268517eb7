import type { Provider } from '@nestjs/common';
import { resolve } from 'node:path';
import { ConfigError } from '#config';
import { ExecutableSkillCatalog } from '../executable/executable-skill.catalog.js';
import { SkillProvenanceRepository } from '../records/skill-provenance.repository.js';
import { SkillRegistryService } from '../skill-registry.service.js';
import { GitHostGuard } from './git-host.guard.js';
import { GitClient } from './git.client.js';
import type { SkillInstallConfig } from './install.config.js';
import { InstallRecordsRepository } from './install-records.repository.js';
import { SkillInstallHandlers } from './skill-install.handlers.js';
import { SkillInstallService } from './skill-install.service.js';

/** Where install records and temporary repositories live: the registry's volume, beside the skills they describe. */
export const installDirOf = (config: SkillInstallConfig) => resolve(config.ALFRED_DATA_DIR, 'skill-installs');

/** Installs from git in the skill-registry's module: they write into the same tenant catalogs and records. */
export function skillInstallProviders(config: SkillInstallConfig): Provider[] {
  const dir = installDirOf(config);
  if (config.ALFRED_SKILLS_INSTALL_SSH_KEY && !config.ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS) {
    throw new ConfigError([
      'ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS: required with ALFRED_SKILLS_INSTALL_SSH_KEY (ssh checks every ' +
        'host key; unknown hosts are refused)',
    ]);
  }
  const ssh =
    config.ALFRED_SKILLS_INSTALL_SSH_KEY && config.ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS
      ? {
          key: resolve(config.ALFRED_SKILLS_INSTALL_SSH_KEY),
          knownHosts: resolve(config.ALFRED_SKILLS_INSTALL_SSH_KNOWN_HOSTS),
        }
      : undefined;
  return [
    { provide: InstallRecordsRepository, useFactory: () => new InstallRecordsRepository(resolve(dir, 'records')) },
    {
      provide: SkillInstallService,
      inject: [SkillRegistryService, ExecutableSkillCatalog, InstallRecordsRepository, SkillProvenanceRepository],
      useFactory: async (
        registry: SkillRegistryService,
        executables: ExecutableSkillCatalog,
        records: InstallRecordsRepository,
        provenance: SkillProvenanceRepository,
      ) => {
        const git = new GitClient({
          binary: 'git',
          workDir: resolve(dir, 'tmp'),
          timeoutMs: config.ALFRED_SKILLS_INSTALL_TIMEOUT_MS,
          maxBytes: config.ALFRED_SKILLS_INSTALL_MAX_BYTES,
          caFile: config.ALFRED_SKILLS_INSTALL_CA_FILE ? resolve(config.ALFRED_SKILLS_INSTALL_CA_FILE) : undefined,
          ssh,
        });
        await git.sweep();
        return new SkillInstallService({
          tenants: registry.tenantSkills,
          executables,
          records,
          provenance,
          git,
          guard: new GitHostGuard(config.ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS),
          policy: { local: config.ALFRED_SKILLS_INSTALL_LOCAL, ssh: ssh !== undefined },
          limits: {
            maxFileBytes: config.ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES,
            maxSkillBytes: config.ALFRED_SKILLS_INSTALL_MAX_SKILL_BYTES,
            maxFiles: 1000,
          },
        });
      },
    },
    SkillInstallHandlers,
  ];
}
