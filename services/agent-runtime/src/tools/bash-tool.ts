import { BashSandbox } from '#sandbox';
import type { AgentTool } from './tool.types.js';
import { failed, intArg, ok, stringArg } from './tool.types.js';

export interface BashToolOptions {
  /** Alfred's API as this worker reaches it (the gateway's real address); inside the sandbox, its loopback port. */
  readonly apiUrl: string;
  readonly defaultTimeoutMs: number;
  readonly maxOutputChars: number;
  /** The OS sandbox every command runs in (or, by the operator's explicit opt-out, the host). */
  readonly sandbox?: BashSandbox;
}

/**
 * The turn's own variables; the sandbox adds its fixed PATH, LANG, HOME, TMPDIR, ALFRED_API_URL and ALFRED_API_KEY (the
 * turn's scoped credential: its tenant, agent and session, expiring with the turn; never the caller's key). Nothing
 * of the worker's environment reaches a command.
 */
export function scrubbedEnv(ctx: { scope: { agent: string }; sessionId: string }): Record<string, string> {
  return {
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
        'Run a shell command in your workspace (a sandbox: your workspace at /workspace, also HOME; a ' +
        "read-only system; no network except Alfred's API). " +
        'ALFRED_API_URL, ALFRED_API_KEY, ALFRED_AGENT and ALFRED_SESSION_ID are set; use them with curl as ' +
        'skills describe. `timeout` is in seconds.',
      input_schema: {
        type: 'object',
        properties: { command: { type: 'string' }, timeout: { type: 'integer', minimum: 1 } },
        required: ['command'],
      },
    },
    async call(input, ctx) {
      const command = stringArg(input, 'command')!;
      const seconds = intArg(input, 'timeout', 1);
      const timeoutMs = Math.min(seconds === undefined ? opts.defaultTimeoutMs : seconds * 1000, opts.defaultTimeoutMs);
      const workspace = await ctx.workspace.root();
      const run = await sandbox.run({
        command,
        workspace,
        tenant: ctx.scope.tenant,
        env: scrubbedEnv(ctx),
        apiUrl: opts.apiUrl,
        ...(ctx.apiKey ? { credential: ctx.apiKey } : {}),
        timeoutMs,
        maxOutputChars: opts.maxOutputChars,
        signal: ctx.signal,
      });
      let text = run.output;
      if (run.dropped > 0) text += `\n[output cut: ${run.dropped} more characters not shown]`;
      if (run.stopped === 'timeout') return failed(`${text}\n[killed after ${timeoutMs} ms timeout]`);
      if (run.stopped === 'cancelled') return failed(`${text}\n[killed: the turn was cancelled]`);
      if (run.stopped === 'quota') return failed(`${text}\n[${run.quotaNote}]`);
      const note = run.quotaNote ? `[${run.quotaNote}]\n` : '';
      const body = `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${note}[exit code ${run.code}]`;
      return run.code === 0 ? ok(body) : failed(body);
    },
  };
}
