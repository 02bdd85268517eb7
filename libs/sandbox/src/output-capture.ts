const TRUNCATED = '\n…[truncated]';
const TAIL_CHARS = 4096;

/** Captured output of one run: kept up to a cap per stream, counted in total against a hard cap. */
export class OutputCapture {
  private readonly kept = { stdout: '', stderr: '' };
  private readonly logs: string[] = [];
  private logChars = 0;
  private logsCut = false;
  private total = 0;
  private truncated = false;
  private stderrTail = '';

  constructor(
    private readonly keepBytes: number,
    private readonly hardCapBytes: number,
  ) {}

  /** Adds output; false once the hard cap is passed. */
  add(stream: 'stdout' | 'stderr' | 'log', text: string): boolean {
    this.total += Buffer.byteLength(text);
    if (stream === 'stderr') this.stderrTail = (this.stderrTail + text).slice(-TAIL_CHARS);
    if (stream === 'log') this.addLog(text);
    else this.kept[stream] = this.keep(this.kept[stream], text);
    return this.total <= this.hardCapBytes;
  }

  /** The last few KiB of stderr, where V8 reports a heap limit. */
  tail(): string {
    return this.stderrTail;
  }

  snapshot(): { stdout: string; stderr: string; logs: string[]; outputTruncated: boolean } {
    return {
      stdout: this.kept.stdout,
      stderr: this.kept.stderr,
      logs: [...this.logs],
      outputTruncated: this.truncated,
    };
  }

  private addLog(line: string): void {
    if (this.logsCut) return;
    if (this.logChars + line.length > this.keepBytes) {
      this.logs.push(TRUNCATED.trim());
      this.logsCut = this.truncated = true;
      return;
    }
    this.logChars += line.length;
    this.logs.push(line);
  }

  private keep(current: string, text: string): string {
    if (current.endsWith(TRUNCATED)) return current;
    if (current.length + text.length <= this.keepBytes) return current + text;
    this.truncated = true;
    return current + text.slice(0, Math.max(0, this.keepBytes - current.length)) + TRUNCATED;
  }
}
