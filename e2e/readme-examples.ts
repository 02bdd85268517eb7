import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';

/** One `curl` command of the README's API examples, split into arguments as a shell would. */
export interface CurlExample {
  readonly line: string;
  /** The variable the README assigns the answer's `id` to (`SID=$(curl ...)`), if any. */
  readonly assigns?: string;
  readonly args: readonly string[];
  readonly method: string;
  /** `$A/...` with the README's variables still in place. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Splits a command line like a POSIX shell (quotes and backslash escapes; no expansion). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; line[i] !== '"'; i++) word += line[i] === '\\' && /["\\$`]/.test(line[i + 1]!) ? line[++i] : line[i];
    } else if (c === '\\') {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

function parse(line: string): CurlExample {
  const assign = /^([A-Z]+)=\$\((curl .*?)\s*\|.*\)$/.exec(line);
  const args = shellWords(assign ? assign[2]! : line.replace(/\s+#.*$/, ''));
  const headers: Record<string, string> = {};
  let method = 'GET';
  let url = '';
  let body: string | undefined;
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-X') method = args[++i]!;
    else if (a === '-H') {
      const [name, ...value] = args[++i]!.split(':');
      headers[name!.trim().toLowerCase()] = value.join(':').trim();
    } else if (a === '-d') body = args[++i]!;
    else if (a.startsWith('$A')) url = a;
  }
  if (body !== undefined && method === 'GET') method = 'POST';
  return {
    line,
    ...(assign ? { assigns: assign[1]! } : {}),
    args,
    method,
    url,
    headers,
    ...(body === undefined ? {} : { body }),
  };
}

const readReadme = () => readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The README's bash blocks, in order, as written. */
export function readmeBashBlocks(readme = readReadme()): string[] {
  return [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Every API example of the README: the `curl` commands of its bash blocks that call `$A`, in order. */
export function readmeCurlExamples(readme = readReadme()): CurlExample[] {
  const lines = readmeBashBlocks(readme).flatMap((b) => b.replace(/\\\n\s*/g, ' ').split('\n'));
  return lines.filter((l) => /(^|\$\()curl .*\$A/.test(l.trim())).map((l) => parse(l.trim()));
}

/** The example's arguments with the README's variables given values. */
export function withVariables(example: CurlExample, vars: Readonly<Record<string, string>>): string[] {
  return example.args.map((a) => a.replace(/\$([A-Z]+)|\$\{([A-Z]+)\}/g, (m, x, y) => vars[x ?? y] ?? m));
}

/**
 * Runs curl arguments (`curl` first) with the README's `-s` and extra headers; the status and the body (JSON when it
 * parses).
 */
export async function runCurl(
  args: readonly string[],
  headers: readonly string[] = [],
): Promise<{ status: number; body: any }> {
  const { stdout } = await promisify(execFile)(
    'curl',
    ['-sS', ...headers.flatMap((h) => ['-H', h]), '-w', '\n%{http_code}', ...args.slice(1).filter((a) => a !== '-s')],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const cut = stdout.lastIndexOf('\n');
  const text = stdout.slice(0, cut);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a rendered skills index and the like
  }
  return { status: Number(stdout.slice(cut + 1)), body };
}
