import { z } from 'zod';
import { envDoc } from './env-docs.js';

describe(envDoc.name, () => {
  it('should show the default through optional, transforms and coercion, and — for none or an empty one', () => {
    const five = z.coerce.number().int().default(5).describe('five');
    expect(envDoc('A', five)).toEqual({ name: 'A', shown: '`5`', about: 'five' });
    const flag = z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .default(false)
      .describe('flag');
    expect(envDoc('B', flag).shown).toBe('`false`');
    expect(
      envDoc(
        'C',
        z
          .string()
          .default('')
          .transform((v) => v.split(','))
          .describe('list'),
      ).shown,
    ).toBe('—');
    expect(envDoc('D', z.string().optional().describe('maybe')).shown).toBe('—');
  });

  it('should show a computed default by the name its schema gives it', () => {
    const named = z
      .string()
      .default(() => process.cwd())
      .meta({ description: 'the project', shownDefault: 'the working directory' });
    expect(envDoc('E', named).shown).toBe('the working directory');
  });

  it('should refuse a variable whose schema does not say what it means', () => {
    expect(() => envDoc('G', z.string().optional())).toThrow(/G: its schema has no description/);
  });
});
