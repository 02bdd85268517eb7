import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * An append-only JSON-lines file: each append is fsynced before it resolves, appends are serialized,
 * and a torn last line (a crash mid-write) is skipped on reading.
 */
export class JsonlLog<T> {
  private handle?: Promise<FileHandle>;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** Every record in the file, oldest first; none when the file does not exist yet. */
  async readAll(): Promise<T[]> {
    await this.tail.catch(() => undefined);
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const records: T[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        records.push(JSON.parse(line) as T);
      } catch {
        // a torn write at the end of the file: that append never resolved, so nobody was told it was stored
      }
    }
    return records;
  }

  append(record: T): Promise<void> {
    const next = this.tail.catch(() => undefined).then(() => this.write(record));
    this.tail = next;
    return next;
  }

  async close(): Promise<void> {
    await this.tail.catch(() => undefined);
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle).close();
  }

  private async write(record: T): Promise<void> {
    const fh = await this.file();
    await fh.appendFile(`${JSON.stringify(record)}\n`, 'utf8');
    await fh.datasync();
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
    await this.endWithNewline(fh);
    // make the new directory entry itself durable
    const dirHandle = await open(dir, 'r');
    await dirHandle.sync().finally(() => dirHandle.close());
    return fh;
  }

  /** After a torn write, start on a fresh line so the next record is not glued to the fragment. */
  private async endWithNewline(fh: FileHandle): Promise<void> {
    const { size } = await fh.stat();
    if (size === 0) return;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] !== 0x0a) await fh.appendFile('\n');
  }
}
