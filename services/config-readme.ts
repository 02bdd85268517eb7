import type { z } from 'zod';
import { envDoc, type EnvDoc } from '#config';
import { skillsCliEnv } from '#skills';
import { ALL_SERVICES } from './all-services.js';
import { gatewayEnvSchema } from './gateway/src/config.js';

/** The README's marked span that holds the configuration table: `<!-- config-table -->…<!-- /config-table -->`. */
export const README_CONFIG_SPAN = /<!-- config-table -->\n([\s\S]*?)<!-- \/config-table -->/;

/** What reads variables: every service's schema, and the CLI's. */
export interface EnvReader {
  readonly name: string;
  readonly schema: z.ZodObject;
  /** A command, not a service ("every service" does not count it). */
  readonly command?: boolean;
}

/** The gateway, the bus services in start order, then the `alfred skills` commands. */
export function envReaders(): EnvReader[] {
  return [
    { name: 'gateway', schema: gatewayEnvSchema },
    ...ALL_SERVICES.map((s) => ({ name: s.name, schema: s.envSchema })),
    { name: '`alfred skills`', schema: skillsCliEnv, command: true },
  ];
}

/** Each variable once, in the order its first reader lists it, with every reader of it. */
export function envRows(readers: readonly EnvReader[]): Array<EnvDoc & { readers: string[] }> {
  const rows = new Map<string, EnvDoc & { readers: string[] }>();
  for (const reader of readers) {
    for (const [name, schema] of Object.entries(reader.schema.shape)) {
      const row = rows.get(name) ?? { ...envDoc(name, schema as z.ZodType), readers: [] };
      row.readers.push(reader.name);
      rows.set(name, row);
    }
  }
  return [...rows.values()];
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The configuration table as the README has it: variable, default, who reads it, meaning. */
export function configTable(readers: readonly EnvReader[]): string {
  const services = readers.filter((r) => !r.command).map((r) => r.name);
  const lines = ['| variable | default | read by | meaning |', '|---|---|---|---|'];
  for (const row of envRows(readers)) {
    const every = services.every((s) => row.readers.includes(s));
    const others = row.readers.filter((r) => !services.includes(r));
    const readBy = (every ? ['every service', ...others] : row.readers).join(', ');
    lines.push(`| \`${row.name}\` | ${cell(row.shown)} | ${readBy} | ${cell(row.about)} |`);
  }
  return `${lines.join('\n')}\n`;
}
