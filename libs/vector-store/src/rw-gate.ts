/**
 * Readers together, writers alone: reads of a table run side by side, while the steps that change what a read
 * must see in one go (a flush moving writes from memory into the table, a cleanup deleting old files) wait for
 * them and hold new ones back. Writers take their turn in arrival order; a waiting writer is not starved by a
 * stream of readers.
 */
export class RwGate {
  private readers = 0;
  private writing = false;
  private readonly queue: Array<{ exclusive: boolean; go: () => void }> = [];

  async shared<T>(run: () => Promise<T>): Promise<T> {
    await this.enter(false);
    try {
      return await run();
    } finally {
      this.readers--;
      this.next();
    }
  }

  async exclusive<T>(run: () => Promise<T>): Promise<T> {
    await this.enter(true);
    try {
      return await run();
    } finally {
      this.writing = false;
      this.next();
    }
  }

  private enter(exclusive: boolean): Promise<void> {
    if (this.queue.length === 0 && this.admits(exclusive)) {
      this.take(exclusive);
      return Promise.resolve();
    }
    return new Promise((go) => this.queue.push({ exclusive, go }));
  }

  private admits(exclusive: boolean): boolean {
    return exclusive ? !this.writing && this.readers === 0 : !this.writing;
  }

  private take(exclusive: boolean): void {
    if (exclusive) this.writing = true;
    else this.readers++;
  }

  private next(): void {
    while (this.queue.length > 0 && this.admits(this.queue[0]!.exclusive)) {
      const { exclusive, go } = this.queue.shift()!;
      this.take(exclusive);
      go();
      if (exclusive) return;
    }
  }
}
