import { BashSandbox } from '#sandbox';
import type { AgentTool } from './tool.types.js';
import { failed, intArg, ok, stringArg } from './tool.types.js';

export interface BashToolOptions {
  /** Alfred's API as this worker reaches it (the gateway's real address); inside the sandbox, its loopback port. */
  readonly apiUrl: string;
  readonly path: string;
  readonly defaultTimeoutMs: number;
  readonly maxOutputChars: number;
  /** The OS sandbox every command runs in (or, by the operator's explicit opt-out, the host). */
  readonly sandbox?: BashSandbox;
}

/**
 * The only variables a command sees besides ALFRED_API_URL, HOME and TMPDIR (set by the sandbox): no secrets of the
 * worker. ALFRED_API_KEY is the turn's scoped credential (its tenant, agent and session; it expires with the turn),
 * never the caller's key.
 */
export function scrubbedEnv(opts: Pick<BashToolOptions, 'path'>, ctx: { scope: { agent: string }; sessionId: string }): Record<string, string> {
  return {
    PATH: opts.path,
    LANG: 'C.UTF-8',
    ALFRED_AGENT: ctx.scope.agent,
    ALFRED_SESSION_ID: ctx.sessionId,
  };
}

export function bashTool(opts: BashToolOptions): AgentTool {
  const sandbox = opts.sandbox ?? new BashSandbox();
  return {
    definition: {
      name: 'bash',
      description:
        'Run a shell command in your workspace (a sandbox: your workspace folder, a read-only system, no network except Alfred\'s API). ' +
        'ALFRED_API_URL, ALFRED_API_KEY, ALFRED_AGENT and ALFRED_SESSION_ID are set; use them with curl as skills describe. `timeout` is in seconds.',
      input_schema: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'integer', minimum: 1 } }, required: ['command'] },
    },
    async call(input, ctx) {
      const command = stringArg(input, 'command')!;
      const seconds = intArg(input, 'timeout', 1);
      const timeoutMs = Math.min(seconds === undefined ? opts.defaultTimeoutMs : seconds * 1000, opts.defaultTimeoutMs);
      const workspace = await ctx.workspace.root();
      const run = await sandbox.run({
        command, workspace, tenant: ctx.scope.tenant, env: scrubbedEnv(opts, ctx), apiUrl: opts.apiUrl,
        ...(ctx.apiKey ? { credential: ctx.apiKey } : {}),
        timeoutMs, maxOutputChars: opts.maxOutputChars, signal: ctx.signal,
      });
      let text = run.output;
      if (run.dropped > 0) text += `\n[output cut: ${run.dropped} more characters not shown]`;
      if (run.stopped === 'timeout') return failed(`${text}\n[killed after ${timeoutMs} ms timeout]`);
      if (run.stopped === 'cancelled') return failed(`${text}\n[killed: the turn was cancelled]`);
      const body = `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}[exit code ${run.code}]`;
      return run.code === 0 ? ok(body) : failed(body);
    },
  };
}
