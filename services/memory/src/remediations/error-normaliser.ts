/**
 * Turns an error text into a machine-independent signature, so the same failure seen on another machine,
 * in another checkout or at another time reads the same: what varies between occurrences is replaced by
 * a placeholder, what identifies the failure (words, error codes such as TS2345 or ECONNREFUSED, file
 * names) stays. Pure; the order of the rules matters (timestamps before numbers, paths before numbers).
 */
const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // ISO-8601 and "2024-01-02 03:04:05" timestamps, with optional fraction and zone
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b/g, '<time>'],
  [/\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  // URLs keep their scheme only
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>)\]]+/gi, '<url>'],
  // Windows paths (C:\a\b\file.ts) and POSIX paths with at least one slash: keep the file name
  [/\b[A-Za-z]:\\(?:[^\\\s'"`:<>|]+\\)*([^\\\s'"`:<>|()]+)/g, '<path>/$1'],
  [/(?:~|\.{1,2})?(?:\/[^/\s'"`:<>()[\]]+)+\/([^/\s'"`:<>()[\]]+)/g, '<path>/$1'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // long hex runs (hashes, object ids) and digit-bearing tokens of 8+ characters (request ids, tokens)
  [/\b[0-9a-f]{8,}\b/gi, '<hex>'],
  [/\b(?=[A-Za-z_-]*\d)(?=\d*[A-Za-z_-])[A-Za-z0-9_-]{12,}\b/g, '<id>'],
  // quoted values: what the message is about varies, the message around it does not
  [/'[^'\n]*'/g, "'<value>'"],
  [/"[^"\n]*"/g, '"<value>"'],
  [/`[^`\n]*`/g, '`<value>`'],
  // line:col and every other free-standing number (not those inside words such as TS2345 or E11000)
  [/(?<![A-Za-z0-9_])-?\d+(?:\.\d+)?(?![A-Za-z0-9_])/g, '<n>'],
];

export function normaliseError(text: string): string {
  let out = text.replace(/\r\n?/g, '\n');
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .filter((line) => line.length > 0)
    .join('\n');
}

/** Stack frames beyond this many say more about the caller than about the failure. */
export const SIGNATURE_STACK_FRAMES = 5;

/** The text a remediation is embedded and searched by: the normalised message, tool and top stack frames. */
export function errorSignature(input: {
  error_message: string;
  stack?: string | undefined;
  tool?: string | undefined;
}): string {
  const parts = [normaliseError(input.error_message)];
  if (input.tool) parts.push(`tool: ${input.tool}`);
  if (input.stack) {
    const frames = normaliseError(input.stack)
      .split('\n')
      .filter((line) => line.startsWith('at '))
      .slice(0, SIGNATURE_STACK_FRAMES);
    if (frames.length > 0) parts.push(frames.join('\n'));
  }
  return parts.join('\n');
}
