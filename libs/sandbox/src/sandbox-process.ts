import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { FetchGuard } from './fetch-guard.js';
import { OutputCapture } from './output-capture.js';
import { ChildMessage, type SandboxEnd, type SandboxLimits } from './sandbox-protocol.js';

/** Everything one sandboxed run needs; all paths are real (symlink-free) absolute paths. */
export interface SandboxSpec {
  nodePath: string;
  bootstrapPath: string;
  skillDir: string;
  entry: string;
  args: Record<string, unknown>;
  env: Record<string, string>;
  /** Root name (`skill`, `self`, `shared/<name>`) to directory. */
  roots: Record<string, string>;
  readable: string[];
  writable: string[];
  allowedHosts: string[];
  timeoutMs: number;
  memoryMb: number;
  limits: SandboxLimits;
  guard: FetchGuard;
}

export interface SandboxOutcome {
  end: SandboxEnd;
  output: ReturnType<OutputCapture['snapshot']>;
}

const OOM_MARKERS = /JavaScript heap out of memory|Reached heap limit|Allocation failed/;
const RESULT_EXIT_GRACE_MS = 1000;
const MEMORY_POLL_MS = 20;

/** Node flags for a run: the permission model with reads/writes only where allowed, and heap caps. */
export function sandboxArgv(spec: Pick<SandboxSpec, 'bootstrapPath' | 'skillDir' | 'roots' | 'readable' | 'writable' | 'memoryMb'>): string[] {
  const dirOf = (name: string) => spec.roots[name] ?? missingRoot(name);
  const reads = new Set([path.dirname(spec.bootstrapPath), spec.skillDir, ...spec.readable.map(dirOf), ...spec.writable.map(dirOf)]);
  const writes = new Set(spec.writable.map(dirOf));
  for (const dir of [...reads, spec.bootstrapPath]) {
    // Node has accepted comma-separated lists in these flags; a comma would widen the grant.
    if (dir.includes(',') || !path.isAbsolute(dir)) throw new AlfredError(ErrorCode.BadRequest, `unusable sandbox path: ${dir}`);
  }
  return [
    '--permission',
    ...[...reads].map((dir) => `--allow-fs-read=${dir}`),
    ...[...writes].map((dir) => `--allow-fs-write=${dir}`),
    `--max-old-space-size=${spec.memoryMb}`,
    `--max-semi-space-size=${Math.max(1, Math.min(16, Math.floor(spec.memoryMb / 16)))}`,
    '--disable-warning=ExperimentalWarning',
    spec.bootstrapPath,
  ];
}

/** Runs one skill execution in a fresh child process and reports how it ended. */
export function runSandboxed(spec: SandboxSpec): Promise<SandboxOutcome> {
  return new SandboxRun(spec).start();
}

class SandboxRun {
  private child?: ChildProcess;
  private end?: SandboxEnd;
  private readonly output: OutputCapture;
  private readonly aborter = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private fetches = 0;

  constructor(private readonly spec: SandboxSpec) {
    this.output = new OutputCapture(spec.limits.outputBytes, spec.limits.outputHardCapBytes);
  }

  start(): Promise<SandboxOutcome> {
    return new Promise((resolve) => {
      const child = spawn(this.spec.nodePath, sandboxArgv(this.spec), {
        cwd: this.spec.skillDir,
        env: this.spec.env,
        // fd 4 carries ctx.log lines (JSON strings), written synchronously by the child like stdout.
        stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'],
        detached: true,
        serialization: 'json',
      });
      this.child = child;
      child.stdout!.setEncoding('utf8').on('data', (text: string) => this.onOutput('stdout', text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => this.onOutput('stderr', text));
      this.readLogLines(child.stdio[4] as NodeJS.ReadableStream);
      child.on('message', (message) => this.onMessage(message));
      child.on('error', (err) => {
        this.kill({ kind: 'crashed', reason: `the sandbox process failed: ${err.message}` });
        // A process that never started emits no 'close'.
        if (child.pid === undefined) resolve({ end: this.end!, output: this.output.snapshot() });
      });
      child.on('close', (code, signal) => {
        this.stopTimers();
        resolve({ end: this.end ?? this.exitReason(code, signal), output: this.output.snapshot() });
      });
      const { entry, args, roots, readable, writable, limits } = this.spec;
      this.sendToChild({ type: 'run', entry, args, roots, readable, writable, maxResultBytes: limits.resultBytes, maxFileBytes: limits.fileBytes });
      this.timers.push(setTimeout(() => this.kill({ kind: 'timed_out' }), this.spec.timeoutMs));
      this.timers.push(setInterval(() => void this.checkMemory(), MEMORY_POLL_MS));
    });
  }

  private onOutput(stream: 'stdout' | 'stderr' | 'log', text: string): void {
    if (!this.output.add(stream, text)) this.kill({ kind: 'output_limit' });
  }

  private readLogLines(stream: NodeJS.ReadableStream): void {
    let carry = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      const lines = (carry + text).split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) this.onOutput('log', decodeLogLine(line));
      if (carry.length > this.spec.limits.outputHardCapBytes) this.kill({ kind: 'output_limit' });
    });
  }

  private onMessage(raw: unknown): void {
    const parsed = ChildMessage.safeParse(raw);
    if (!parsed.success) return this.kill({ kind: 'crashed', reason: 'the sandbox sent a malformed message' });
    const message = parsed.data;
    switch (message.type) {
      case 'result':
        return this.settle({ kind: 'result', json: message.json });
      case 'threw':
        return this.settle({ kind: 'threw', message: message.message });
      case 'fetch':
        return void this.onFetch(message);
    }
  }

  private settle(end: SandboxEnd): void {
    this.end ??= end;
    // The bootstrap exits by itself after answering; this only catches a child that does not.
    this.timers.push(setTimeout(() => this.kill(end), RESULT_EXIT_GRACE_MS));
  }

  private async onFetch(message: Extract<ChildMessage, { type: 'fetch' }>): Promise<void> {
    const { id, request } = message;
    if (++this.fetches > this.spec.limits.fetchesPerRun) {
      return this.sendToChild({ type: 'fetch-reply', id, error: `more than ${this.spec.limits.fetchesPerRun} fetches in one run` });
    }
    try {
      const body = request.body === undefined ? undefined : Buffer.from(request.body, 'base64');
      const response = await this.spec.guard.fetch({ ...request, body }, this.spec.allowedHosts, this.aborter.signal);
      const encoded = Buffer.from(response.body).toString('base64');
      this.sendToChild({ type: 'fetch-reply', id, status: response.status, statusText: response.statusText, url: response.url, headers: response.headers, body: encoded });
    } catch (err) {
      this.sendToChild({ type: 'fetch-reply', id, error: (err as Error).message });
    }
  }

  private sendToChild(message: Record<string, unknown>): void {
    if (this.child?.connected) this.child.send(message, () => undefined);
  }

  private async checkMemory(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || this.end) return;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const rssKb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0);
    if (rssKb > (this.spec.memoryMb + this.spec.limits.rssHeadroomMb) * 1024) this.kill({ kind: 'out_of_memory' });
  }

  private kill(end: SandboxEnd): void {
    this.end ??= end;
    this.aborter.abort();
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      this.child?.kill('SIGKILL');
    }
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): SandboxEnd {
    if (OOM_MARKERS.test(this.output.tail())) return { kind: 'out_of_memory' };
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const lastLine = this.output.tail().trim().split('\n').at(-1);
    return { kind: 'crashed', reason: `the skill process ${how} before returning a result${lastLine ? `: ${lastLine}` : ''}` };
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.aborter.abort();
  }
}

function decodeLogLine(line: string): string {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'string' ? value : line;
  } catch {
    return line;
  }
}

function missingRoot(name: string): never {
  throw new AlfredError(ErrorCode.Internal, `sandbox root ${name} was not prepared`);
}
