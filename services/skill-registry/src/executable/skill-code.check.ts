import { stripTypeScriptTypes } from 'node:module';

const EXPORTS_EXECUTE =
  /export\s+(async\s+)?function\s*\*?\s*execute\b|export\s+(const|let|var)\s+execute\b|export\s*\{[^}]*\bexecute\b[^}]*\}/;

/**
 * A quick check of execute.ts without running it: Node's own type stripping parses the whole module (so a
 * syntax error or a non-erasable construct such as an enum is found here, as Node would find it at run time),
 * and the module must visibly export `execute`. Returns the problem, or undefined.
 */
export function checkSkillCode(code: string): string | undefined {
  try {
    stripTypeScriptTypes(code, { mode: 'strip' });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'unparseable';
    return `execute.ts does not parse: ${message}`;
  }
  if (!EXPORTS_EXECUTE.test(code)) return 'execute.ts must export a function execute(args, ctx)';
  return undefined;
}
