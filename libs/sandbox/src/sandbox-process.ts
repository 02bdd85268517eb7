import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { FetchGuard } from './fetch-guard.js';
import { signalTree, treeCpuSeconds, treeRssKb } from './os/process-tree.js';
import { OutputCapture } from './output-capture.js';
import { cpuBudgetSeconds, skillProcessCommand, skillView, type SkillProcessSpec } from './sandbox-command.js';
import { ChildMessage, type SandboxEnd, type SandboxLimits } from './sandbox-protocol.js';
import { MarkerSplitter } from './stream-marker.js';

/** Everything one sandboxed run needs; all paths are real (symlink-free) absolute paths. */
export interface SandboxSpec extends SkillProcessSpec {
  entry: string;
  args: Record<string, unknown>;
  env: Record<string, string>;
  allowedHosts: string[];
  limits: SandboxLimits;
  guard: FetchGuard;
  /** Takes `bytes` of the tenant's disk quota for a write, or answers why not. */
  reserve?: (bytes: number) => Promise<string | undefined>;
}

export interface SandboxOutcome {
  end: SandboxEnd;
  output: ReturnType<OutputCapture['snapshot']>;
  /** True when the process ended the run cleanly and may take another run of the same skill version. */
  reusable: boolean;
  pid: number | undefined;
}

const OOM_MARKERS = /JavaScript heap out of memory|Reached heap limit|Allocation failed/;
const RESULT_EXIT_GRACE_MS = 1000;
const MEMORY_POLL_MS = 20;
/** Resident memory of the sandbox's own helper processes (bubblewrap's three when root, ~2 MB each), besides Node's. */
const SANDBOX_RSS_MB = 10;
/** Output a kept-alive process may write between runs before it is killed. */
const IDLE_OUTPUT_CAP = 64 * 1024;

/** Runs one skill execution in a fresh child process that exits after it, and reports how it ended. */
export function runSandboxed(spec: SandboxSpec): Promise<SandboxOutcome> {
  return new SandboxRun(spec, new SandboxProcess(spec, false), false).start();
}

/** Runs one execution in a process that stays up afterwards if it ended cleanly (the warm pool's runs). */
export function runWarm(spec: SandboxSpec, proc: SandboxProcess): Promise<SandboxOutcome> {
  return new SandboxRun(spec, proc, true).start();
}

/**
 * One permission-restricted child. Used once, or kept alive by the warm pool for more runs of the same
 * skill version: output between runs belongs to no run and is discarded (past a small cap, the process dies).
 */
export class SandboxProcess {
  readonly child: ChildProcess;
  runs = 0;
  private run?: SandboxRun;
  private exited = false;
  private idleOutput = 0;
  private logCarry = '';
  private readonly exitListeners: Array<() => void> = [];

  private frozen = false;
  private readonly cpuBudget: number;
  private readonly cpuPerRun: number;

  constructor(spec: Pick<SandboxSpec, keyof SkillProcessSpec | 'env'>, keepAlive: boolean) {
    const { file, args } = skillProcessCommand(spec, keepAlive);
    this.cpuBudget = cpuBudgetSeconds(spec.timeoutMs, keepAlive);
    this.cpuPerRun = cpuBudgetSeconds(spec.timeoutMs, false);
    this.child = spawn(file, args, {
      // The sandbox chooses its own working folder; the host's is one the service can always enter.
      cwd: spec.os ? '/' : spec.skillDir,
      env: spec.env,
      // fd 4 carries ctx.log lines (JSON strings), written synchronously by the child like stdout.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'],
      detached: true,
      serialization: 'json',
    });
    const child = this.child;
    child
      .stdout!.setEncoding('utf8')
      .on('data', (text: string) => (this.run ? this.run.onStream('stdout', text) : this.onIdle(text)));
    child
      .stderr!.setEncoding('utf8')
      .on('data', (text: string) => (this.run ? this.run.onStream('stderr', text) : this.onIdle(text)));
    const log = child.stdio[4] as NodeJS.ReadableStream;
    log.setEncoding('utf8');
    log.on('data', (text: string) => this.onLogData(text));
    child.on('message', (message) => this.run?.onMessage(message));
    child.on('error', (err) => this.run?.onSpawnError(err));
    child.on('close', (code, signal) => {
      this.exited = true;
      this.run?.onClose(code, signal);
      for (const listener of this.exitListeners.splice(0)) listener();
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited && this.child.connected && this.child.pid !== undefined;
  }

  onExit(listener: () => void): void {
    if (this.exited) listener();
    else this.exitListeners.push(listener);
  }

  attach(run: SandboxRun): void {
    this.runs++;
    this.run = run;
  }

  detach(): void {
    this.run = undefined;
  }

  send(message: Record<string, unknown>): void {
    if (this.child.connected) this.child.send(message, () => undefined);
  }

  kill(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exited) return;
    // The sandbox's own processes run in a new session: signal the tree, then the group.
    signalTree(pid, 'SIGKILL');
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }

  /** Stops every process of the sandbox between runs (SIGSTOP): an idle warm process runs nothing at all. */
  freeze(): void {
    if (this.child.pid === undefined || this.exited) return;
    signalTree(this.child.pid, 'SIGSTOP');
    this.frozen = true;
  }

  thaw(): void {
    if (!this.frozen || this.child.pid === undefined) return;
    this.frozen = false;
    signalTree(this.child.pid, 'SIGCONT');
  }

  /** Whether a further run would still find its full CPU time under the process's RLIMIT_CPU. */
  hasCpuForAnotherRun(): boolean {
    const pid = this.child.pid;
    return pid !== undefined && treeCpuSeconds(pid) + this.cpuPerRun <= this.cpuBudget;
  }

  /** Resident memory of the whole sandbox (KiB). */
  rssKb(): number {
    return this.child.pid === undefined ? 0 : treeRssKb(this.child.pid);
  }

  private onLogData(text: string): void {
    const lines = (this.logCarry + text).split('\n');
    this.logCarry = lines.pop() ?? '';
    for (const line of lines) {
      if (this.run) this.run.onLogLine(line);
      else this.onIdle(line);
    }
    if (this.logCarry.length > IDLE_OUTPUT_CAP && !this.run) this.kill();
    else if (this.run && this.logCarry.length > this.run.hardCap) this.run.onOversizedLine();
  }

  private onIdle(text: string): void {
    this.idleOutput += text.length;
    if (this.idleOutput > IDLE_OUTPUT_CAP) this.kill();
  }
}

class SandboxRun {
  private end?: SandboxEnd;
  private resultIn = false;
  private killed = false;
  private done?: (outcome: SandboxOutcome) => void;
  private readonly output: OutputCapture;
  private readonly aborter = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly nonce = randomUUID();
  private readonly split: Record<'stdout' | 'stderr', MarkerSplitter>;
  private logMarkerSeen = false;
  private fetches = 0;
  private leftoverFree = false;
  /** The kept-alive process said it is idle (its event loop turned after the result). */
  private idle = false;

  constructor(
    private readonly spec: SandboxSpec,
    private readonly proc: SandboxProcess,
    private readonly keepAlive: boolean,
  ) {
    this.output = new OutputCapture(spec.limits.outputBytes, spec.limits.outputHardCapBytes);
    const marker = `\0${this.nonce}\n`;
    this.split = { stdout: new MarkerSplitter(marker), stderr: new MarkerSplitter(marker) };
  }

  get hardCap(): number {
    return this.spec.limits.outputHardCapBytes;
  }

  start(): Promise<SandboxOutcome> {
    return new Promise((resolve) => {
      this.done = resolve;
      this.proc.attach(this);
      if (!this.proc.alive && this.proc.pid !== undefined) {
        this.end = { kind: 'crashed', reason: 'the sandbox process ended before the run started' };
        return this.finish(false);
      }
      const { args, readable, writable, limits } = this.spec;
      const { skillDir, roots } = skillView(this.spec);
      const entry = path.posix.join(skillDir, path.relative(this.spec.skillDir, this.spec.entry));
      this.proc.send({
        type: 'run',
        entry,
        skillDir,
        envNames: Object.keys(this.spec.env),
        args,
        roots,
        readable,
        writable,
        maxResultBytes: limits.resultBytes,
        maxFileBytes: limits.fileBytes,
        nonce: this.nonce,
        keepAlive: this.keepAlive,
      });
      this.timers.push(setTimeout(() => this.kill({ kind: 'timed_out' }), this.spec.timeoutMs));
      this.timers.push(setInterval(() => this.checkMemory(), MEMORY_POLL_MS));
    });
  }

  onStream(stream: 'stdout' | 'stderr', text: string): void {
    this.onOutput(stream, this.keepAlive ? this.split[stream].push(text) : text);
    if (this.keepAlive && this.split[stream].seen) this.maybeDone();
  }

  onLogLine(line: string): void {
    if (this.keepAlive && line === `\0${this.nonce}`) {
      this.logMarkerSeen = true;
      this.maybeDone();
      return;
    }
    if (!this.logMarkerSeen) this.onOutput('log', decodeLogLine(line));
  }

  onOversizedLine(): void {
    this.kill({ kind: 'output_limit' });
  }

  onMessage(raw: unknown): void {
    const parsed = ChildMessage.safeParse(raw);
    if (!parsed.success) {
      this.kill({ kind: 'crashed', reason: 'the sandbox sent a malformed message' });
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'result':
        this.settle({ kind: 'result', json: message.json });
        break;
      case 'threw':
        this.settle({ kind: 'threw', message: message.message });
        break;
      case 'idle':
        this.idle = true;
        this.leftoverFree = message.reusable;
        this.maybeDone();
        break;
      case 'fetch':
        void this.onFetch(message);
        break;
      case 'reserve':
        void this.onReserve(message.id, message.bytes);
        break;
    }
  }

  onSpawnError(err: Error): void {
    this.kill({ kind: 'crashed', reason: `the sandbox process failed: ${err.message}` });
    // A process that never started emits no 'close'.
    if (this.proc.pid === undefined) this.finish(false);
  }

  onClose(code: number | null, signal: NodeJS.Signals | null): void {
    for (const stream of ['stdout', 'stderr'] as const)
      if (this.keepAlive) this.onOutput(stream, this.split[stream].flush());
    this.end ??= this.exitReason(code, signal);
    this.finish(false);
  }

  private onOutput(stream: 'stdout' | 'stderr' | 'log', text: string): void {
    if (text && !this.output.add(stream, text)) this.kill({ kind: 'output_limit' });
  }

  private settle(end: SandboxEnd): void {
    this.end ??= end;
    this.resultIn = true;
    // A single-use child exits by itself after answering; a kept-alive one writes its end markers.
    this.timers.push(setTimeout(() => this.kill(end), RESULT_EXIT_GRACE_MS));
    if (this.keepAlive) this.maybeDone();
  }

  private maybeDone(): void {
    if (
      this.resultIn &&
      this.idle &&
      !this.killed &&
      this.split.stdout.seen &&
      this.split.stderr.seen &&
      this.logMarkerSeen
    )
      this.finish(true);
  }

  private finish(reusable: boolean): void {
    if (!this.done) return;
    const done = this.done;
    this.done = undefined;
    for (const timer of this.timers) clearTimeout(timer);
    this.aborter.abort();
    this.proc.detach();
    const keep =
      reusable && !this.killed && this.leftoverFree && this.withinMemory() && this.proc.hasCpuForAnotherRun();
    done({ end: this.end!, output: this.output.snapshot(), reusable: keep, pid: this.proc.pid });
  }

  private async onFetch(message: Extract<ChildMessage, { type: 'fetch' }>): Promise<void> {
    const { id, request } = message;
    if (++this.fetches > this.spec.limits.fetchesPerRun) {
      return this.proc.send({
        type: 'fetch-reply',
        id,
        error: `more than ${this.spec.limits.fetchesPerRun} fetches in one run`,
      });
    }
    try {
      const body = request.body === undefined ? undefined : Buffer.from(request.body, 'base64');
      const response = await this.spec.guard.fetch({ ...request, body }, this.spec.allowedHosts, this.aborter.signal);
      const encoded = Buffer.from(response.body).toString('base64');
      this.proc.send({
        type: 'fetch-reply',
        id,
        status: response.status,
        statusText: response.statusText,
        url: response.url,
        headers: response.headers,
        body: encoded,
      });
    } catch (err) {
      this.proc.send({ type: 'fetch-reply', id, error: (err as Error).message });
    }
  }

  private async onReserve(id: number, bytes: number): Promise<void> {
    const error = this.spec.reserve
      ? await this.spec.reserve(bytes).catch((err: Error) => `disk quota unavailable: ${err.message}`)
      : undefined;
    this.proc.send({ type: 'reserve-reply', id, ...(error ? { error } : {}) });
  }

  private checkMemory(): void {
    if (this.proc.pid === undefined || this.end) return;
    if (!this.withinMemory()) this.kill({ kind: 'out_of_memory' });
  }

  private withinMemory(): boolean {
    return this.proc.rssKb() <= (this.spec.memoryMb + this.spec.limits.rssHeadroomMb + SANDBOX_RSS_MB) * 1024;
  }

  private kill(end: SandboxEnd): void {
    this.end ??= end;
    this.killed = true;
    this.aborter.abort();
    this.proc.kill();
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): SandboxEnd {
    if (OOM_MARKERS.test(this.output.tail())) return { kind: 'out_of_memory' };
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const lastLine = this.output.tail().trim().split('\n').at(-1);
    return {
      kind: 'crashed',
      reason: `the skill process ${how} before returning a result${lastLine ? `: ${lastLine}` : ''}`,
    };
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
