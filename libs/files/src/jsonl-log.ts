import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Metrics } from '#metrics';

/** Where one record's line lies in the file (its bytes, without the newline). */
export interface LogPosition {
  readonly offset: number;
  readonly length: number;
}

/** Appends that share one write (and one fsync when any of them needs it). */
interface Batch {
  readonly lines: Buffer[];
  sync: boolean;
  done: Promise<LogPosition[]>;
}

/** A record read back with its position, to index it. */
export interface PositionedRecord<T> extends LogPosition {
  readonly record: T;
}

/**
 * An append-only JSON-lines file: each append is fsynced before it resolves, appends are serialized (those made
 * while a write is under way share the next write and fsync: group commit), and a torn last line (a crash
 * mid-write) is skipped on reading. Appends report where their line lies, so a caller
 * can keep an index and read single records back (`readAt`) instead of the whole file; `rewrite` compacts it.
 */
export class JsonlLog<T> {
  private handle?: Promise<FileHandle>;
  /** The same file opened O_DSYNC: a durable append is one write that returns once on disk, not a write then fsync. */
  private syncHandle?: Promise<FileHandle>;
  private tail: Promise<unknown> = Promise.resolve();
  /** Appends waiting for the next write, which takes them all. */
  private batch?: Batch;
  /** The file's size once open: where the next line starts. */
  private size = 0;
  /** The file's size as this log last saw it (scan, append, rewrite); -1 before any. */
  private known = -1;
  /** A `sync` queued behind the operations under way: later callers share it. */
  private syncing?: Promise<void>;

  constructor(
    readonly path: string,
    /** Names the log in the durable-log metrics (appends and fsyncs); unnamed logs are not counted. */
    private readonly metric?: string,
  ) {}

  /** Bytes this log has written to its file (0 until its first append opens it). */
  get bytes(): number {
    return this.size;
  }

  /** Every record in the file, oldest first; none when the file does not exist yet. */
  async readAll(): Promise<T[]> {
    return (await this.scan()).map((p) => p.record);
  }

  /** Every record with its position, oldest first (to build an index). */
  scan(): Promise<PositionedRecord<T>[]> {
    return this.exclusive(() => this.scanFile());
  }

  private async scanFile(): Promise<PositionedRecord<T>[]> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.known = 0;
        return [];
      }
      throw err;
    }
    this.known = bytes.length;
    const out: PositionedRecord<T>[] = [];
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline < 0 ? bytes.length : newline;
      const record = parseLine<T>(bytes.subarray(start, end));
      if (record !== undefined) out.push({ record, offset: start, length: end - start });
      start = end + 1;
    }
    return out;
  }

  /**
   * The records at these positions (from `append` or `scan`), in the order given; a line that will not parse is
   * skipped.
   */
  readAt(positions: readonly LogPosition[]): Promise<T[]> {
    if (positions.length === 0) return Promise.resolve([]);
    return this.exclusive(async () => {
      const fh = await this.file();
      const out: T[] = [];
      for (const { offset, length } of positions) {
        const buf = Buffer.alloc(length);
        const { bytesRead } = await fh.read(buf, 0, length, offset);
        const record = parseLine<T>(buf.subarray(0, bytesRead));
        if (record !== undefined) out.push(record);
      }
      return out;
    });
  }

  /**
   * Appends one record; resolves with where its line lies. Durably (fsynced) unless `sync` is false: then the line
   * is in the file — a killed process loses nothing — but a machine that loses power may lose it; for records whose
   * loss only repeats work (a "published" mark), or that `sync()` makes durable later. A durable append makes its own
   * lines durable, not earlier ones appended without `sync` (only `sync()` does that).
   */
  append(record: T, sync = true): Promise<LogPosition> {
    let batch = this.batch;
    if (!batch) {
      const fresh: Batch = { lines: [], sync: false, done: Promise.resolve([]) };
      fresh.done = this.exclusive(() => {
        if (this.batch === fresh) this.batch = undefined;
        return this.write(fresh.lines, fresh.sync);
      });
      this.batch = batch = fresh;
    }
    const index = batch.lines.length;
    batch.lines.push(Buffer.from(`${JSON.stringify(record)}\n`, 'utf8'));
    batch.sync ||= sync;
    return batch.done.then((positions) => positions[index]!);
  }

  /**
   * Makes every line appended so far durable (one fsync, shared by the calls made while it waits its turn): for
   * appends made with `sync` false whose durability is wanted later, off the path of whoever waited for them.
   */
  sync(): Promise<void> {
    this.syncing ??= this.exclusive(async () => {
      this.syncing = undefined;
      if (!this.handle) return;
      await (await this.file()).datasync();
      if (this.metric) Metrics.logSyncs.inc({ log: this.metric });
    });
    return this.syncing;
  }

  /**
   * Replaces the file's content with `records` (a compaction): written to a temporary file, fsynced and renamed over
   * the log, so a crash leaves either the old log or the new one. `keep` is called when every earlier append has
   * landed, and may read what the file holds then (`current`). Resolves with the records' new positions.
   */
  rewrite(keep: (current: () => Promise<T[]>) => readonly T[] | Promise<readonly T[]>): Promise<LogPosition[]> {
    return this.exclusive(async () => {
      const records = await keep(async () => (await this.scanFile()).map((p) => p.record));
      const temp = `${this.path}.compact`;
      const positions: LogPosition[] = [];
      let offset = 0;
      const lines = records.map((r) => {
        const line = Buffer.from(JSON.stringify(r), 'utf8');
        positions.push({ offset, length: line.length });
        offset += line.length + 1;
        return line;
      });
      await mkdir(dirname(this.path), { recursive: true });
      const out = await open(temp, 'w');
      try {
        if (lines.length > 0) await out.writeFile(Buffer.concat(lines.flatMap((l) => [l, NEWLINE])));
        await out.datasync();
      } finally {
        await out.close();
      }
      await this.closeHandle();
      await rename(temp, this.path).catch(async (err: unknown) => {
        await rm(temp, { force: true });
        throw err;
      });
      await syncDir(dirname(this.path));
      this.known = offset;
      return positions;
    });
  }

  /** True when the file is no longer what this log last saw: another writer appended, so positions may be missing. */
  changedElsewhere(): Promise<boolean> {
    return this.exclusive(async () => {
      const size = await stat(this.path).then(
        (s) => s.size,
        () => 0,
      );
      return this.known < 0 || size !== this.known;
    });
  }

  async close(): Promise<void> {
    await this.tail.catch(() => undefined);
    await this.closeHandle();
  }

  /** Runs `op` after every earlier operation settled, alone: reads never see a half-done rewrite. */
  private exclusive<R>(op: () => Promise<R>): Promise<R> {
    const next = this.tail.catch(() => undefined).then(op);
    this.tail = next;
    return next;
  }

  /** Writes the lines with one append, durable when any asked for it; resolves with where each lies. */
  private async write(lines: readonly Buffer[], sync: boolean): Promise<LogPosition[]> {
    const fh = await this.file();
    const positions: LogPosition[] = [];
    let offset = this.size;
    for (const line of lines) {
      positions.push({ offset, length: line.length - 1 });
      offset += line.length;
    }
    // Both handles append (O_APPEND), and writes are serialized: each line lies where it was counted.
    await (sync ? await this.durableFile() : fh).appendFile(Buffer.concat(lines));
    this.size = offset;
    this.known = this.size;
    if (this.metric) {
      Metrics.logRecords.inc({ log: this.metric }, lines.length);
      if (sync) Metrics.logSyncs.inc({ log: this.metric });
    }
    return positions;
  }

  private async closeHandle(): Promise<void> {
    const handles = [this.handle, this.syncHandle];
    this.handle = undefined;
    this.syncHandle = undefined;
    for (const handle of handles) if (handle) await (await handle.catch(() => undefined))?.close();
  }

  /** Opened once `file()` made sure of the folder, the directory entry and the last line's end. */
  private durableFile(): Promise<FileHandle> {
    this.syncHandle ??= open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_DSYNC).catch(
      (err: unknown) => {
        this.syncHandle = undefined;
        throw err;
      },
    );
    return this.syncHandle;
  }

  private file(): Promise<FileHandle> {
    this.handle ??= this.openFile().catch((err: unknown) => {
      this.handle = undefined;
      throw err;
    });
    return this.handle;
  }

  private async openFile(): Promise<FileHandle> {
    const dir = dirname(this.path);
    await mkdir(dir, { recursive: true });
    const fh = await open(this.path, 'a+');
    this.size = await this.endWithNewline(fh);
    // make the new directory entry itself durable
    await syncDir(dir);
    return fh;
  }

  /** After a torn write, start on a fresh line so the next record is not glued to the fragment. Returns the size. */
  private async endWithNewline(fh: FileHandle): Promise<number> {
    const { size } = await fh.stat();
    if (size === 0) return 0;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return size;
    await fh.appendFile('\n');
    return size + 1;
  }
}

const NEWLINE = Buffer.from('\n');

function parseLine<T>(bytes: Buffer): T | undefined {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    // a torn write at the end of the file: that append never resolved, so nobody was told it was stored
    return undefined;
  }
}

async function syncDir(dir: string): Promise<void> {
  const dirHandle = await open(dir, 'r');
  await dirHandle.sync().finally(() => dirHandle.close());
}
