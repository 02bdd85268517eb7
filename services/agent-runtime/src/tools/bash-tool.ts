import { spawn } from 'node:child_process';
import type { AgentTool, ToolOutcome } from './tool.types.js';
import { failed, intArg, ok, stringArg } from './tool.types.js';

export interface BashToolOptions {
  /** The API skills call with curl (ALFRED_API_URL in the command's environment). */
  readonly apiUrl: string;
  readonly path: string;
  readonly defaultTimeoutMs: number;
  readonly maxOutputChars: number;
}

/** The only variables a command sees: no secrets of the worker (keys, URLs of the stores) leak into it. */
export function scrubbedEnv(opts: BashToolOptions, ctx: { scope: { agent: string }; sessionId: string; apiKey?: string }, home: string): NodeJS.ProcessEnv {
  return {
    // The caller's own key (only when the gateway requires keys): the agent acts with its caller's rights.
    ...(ctx.apiKey ? { ALFRED_API_KEY: ctx.apiKey } : {}),
    PATH: opts.path,
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    ALFRED_API_URL: opts.apiUrl,
    ALFRED_AGENT: ctx.scope.agent,
    ALFRED_SESSION_ID: ctx.sessionId,
  };
}

/** Runs one command in the workspace: its own process group (killed whole on timeout or cancel), output capped. */
function run(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number, maxChars: number, signal: AbortSignal): Promise<ToolOutcome> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let dropped = 0;
    let stopped: 'timeout' | 'cancelled' | undefined;
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const room = maxChars - output.length;
      if (room > 0) output += text.slice(0, room);
      dropped += Math.max(0, text.length - Math.max(room, 0));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const kill = (why: 'timeout' | 'cancelled') => {
      stopped ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    const onAbort = () => kill('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    const finish = (code: number | null, error?: Error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      let text = output;
      if (dropped > 0) text += `\n[output cut: ${dropped} more characters not shown]`;
      if (error) return resolve(failed(`could not run bash: ${error.message}`));
      if (stopped === 'timeout') return resolve(failed(`${text}\n[killed after ${timeoutMs} ms timeout]`));
      if (stopped === 'cancelled') return resolve(failed(`${text}\n[killed: the turn was cancelled]`));
      const body = `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}[exit code ${code}]`;
      resolve(code === 0 ? ok(body) : failed(body));
    };
    child.once('error', (err) => finish(null, err));
    child.once('close', (code) => finish(code));
  });
}

export function bashTool(opts: BashToolOptions): AgentTool {
  return {
    definition: {
      name: 'bash',
      description:
        'Run a shell command in your workspace. ALFRED_API_URL, ALFRED_AGENT and ALFRED_SESSION_ID (and ALFRED_API_KEY when the API requires keys) are set; use them with curl as skills describe. ' +
        '`timeout` is in seconds.',
      input_schema: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'integer', minimum: 1 } }, required: ['command'] },
    },
    async call(input, ctx) {
      const command = stringArg(input, 'command')!;
      const seconds = intArg(input, 'timeout', 1);
      const timeoutMs = Math.min(seconds === undefined ? opts.defaultTimeoutMs : seconds * 1000, opts.defaultTimeoutMs);
      const cwd = await ctx.workspace.root();
      return run(command, cwd, scrubbedEnv(opts, ctx, cwd), timeoutMs, opts.maxOutputChars, ctx.signal);
    },
  };
}
