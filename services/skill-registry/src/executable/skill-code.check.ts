import { initSync, parse } from 'es-module-lexer';
import { stripTypeScriptTypes } from 'node:module';

initSync();

/**
 * A check of execute.ts without running it: Node's own type stripping parses the whole module (so a syntax error or
 * a non-erasable construct such as an enum is found here, as Node would find it at run time); then an ES module
 * lexer (comments and strings are not code) must find ES module syntax — CommonJS is refused, since the sandbox
 * runs ES modules only — and an `execute` export. The sandbox enforces both again when the skill is loaded.
 * Returns the problem, or undefined.
 */
export function checkSkillCode(code: string): string | undefined {
  let js: string;
  try {
    js = stripTypeScriptTypes(code, { mode: 'strip' });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'unparseable';
    return `execute.ts does not parse: ${message}`;
  }
  let exports: ReadonlyArray<{ n: string }>;
  let hasModuleSyntax: boolean;
  try {
    [, exports, , hasModuleSyntax] = parse(js, 'execute.ts');
  } catch (err) {
    return `execute.ts does not parse: ${(err as Error).message.split('\n')[0]}`;
  }
  if (!hasModuleSyntax)
    return (
      'execute.ts must be an ES module (export async function execute(args, ctx)); CommonJS (require, ' +
      'module.exports) is not supported'
    );
  if (!exports.some((e) => e.n === 'execute')) return 'execute.ts must export a function execute(args, ctx)';
  return undefined;
}
