import { readFileSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';
import { envDoc } from '#config';
import { configTable, envReaders, README_CONFIG_SPAN } from './config-readme.js';

const README = new URL('../README.md', import.meta.url);

describe('README and the configuration schemas', () => {
  it('should describe each variable the same way in every schema that reads it', () => {
    const seen = new Map<string, { reader: string; doc: ReturnType<typeof envDoc> }>();
    const differing: string[] = [];
    for (const reader of envReaders()) {
      for (const [name, schema] of Object.entries(reader.schema.shape)) {
        const doc = envDoc(name, schema as z.ZodType);
        const first = seen.get(name);
        if (!first) seen.set(name, { reader: reader.name, doc });
        else if (JSON.stringify(first.doc) !== JSON.stringify(doc)) {
          differing.push(`${name}: ${first.reader} and ${reader.name} differ`);
        }
      }
    }
    expect(differing).toEqual([]);
  });

  it('should hold the table the schemas make (ALFRED_UPDATE_README=1 rewrites it)', () => {
    const readme = readFileSync(README, 'utf8');
    const span = README_CONFIG_SPAN.exec(readme);
    expect(span).not.toBeNull();
    const wanted = configTable(envReaders());
    if (span![1] !== wanted && process.env.ALFRED_UPDATE_README === '1') {
      const table = `<!-- config-table -->\n${wanted}<!-- /config-table -->`;
      writeFileSync(README, readme.replace(README_CONFIG_SPAN, table));
      return;
    }
    expect(span![1]).toBe(wanted);
  });
});
