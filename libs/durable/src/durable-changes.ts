import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { ErrorCode, type EventDef, type PayloadOf } from '#contracts';
import { AlfredError } from '#errors';
import type { Bus } from '#bus';
import { JsonlLog } from '#files';
import type { LineLogger } from '#logging';
import { outboxContents, outboxFileName, type OutboxEvent, type OutboxRecord } from './outbox-records.js';

export type { OutboxEvent } from './outbox-records.js';

/** One event a change emits. `msgId` defaults to one unique to this change (the outbox's transaction id). */
export interface ChangeEvent<E extends EventDef = EventDef> {
  readonly event: E;
  readonly payload: PayloadOf<E>;
  readonly key: string;
  readonly msgId?: string;
}

/**
 * After a crash between a change's intent and its outcome: did the store write land? Asked once per event of the
 * interrupted change (true for any = it landed, so its events are published; false for all = it did not).
 */
export type LandedCheck = (event: OutboxEvent) => Promise<boolean>;

/**
 * A store write the outbox's log carries itself (the embedded store's journaled writes, see #vector-store): it is
 * durable once the change's one log line is, and `apply` makes it visible; after a crash it is replayed from the log.
 */
export interface JournaledWrite {
  readonly target: string;
  readonly data: unknown;
  apply(): void;
}

/** Where journaled writes land again after a crash, and what persists them so their log can be deleted. */
export interface JournalTarget {
  readonly name: string;
  replay(data: unknown): void;
  flush(): Promise<void>;
}

/** A write of a change: journaled, or a call to a store of its own (a remote one) made between intent and commit. */
export type StoreWrite = JournaledWrite | (() => Promise<unknown>);

/** What a service writing durable changes needs of DurableChanges. */
export interface ChangeWriter {
  apply<T>(events: ChangeEvents<T>, write: () => Promise<T>): Promise<T>;
  commit(events: readonly ChangeEvent[], writes: readonly StoreWrite[]): Promise<void>;
}

/**
 * A change's events: known before the write, or made from its result (e.g. counts after an atomic increment). The
 * latter are recorded with the commit, so a crash between the write and the commit loses their event, not the change.
 */
export type ChangeEvents<T> = readonly ChangeEvent[] | ((result: T) => readonly ChangeEvent[]);

export interface DurableChangesOptions {
  readonly bus: Bus;
  /** The outbox folder; several instances may share it (each writes its own locked file, and adopts dead ones'). */
  readonly dir: string;
  /** Every event a change may emit: a relayed event is published with its definition (schema, stream). */
  readonly events: readonly EventDef[];
  readonly landed: LandedCheck;
  /**
   * The stores whose writes the log carries. With any, this instance is its folder's only writer (the embedded store
   * holds its tables' writer locks): every file found at open is replayed, in the order written, before it serves.
   */
  readonly targets?: readonly JournalTarget[];
  readonly logger: LineLogger & { info?(obj: object, msg: string): void };
  /** How often files of dead instances are looked for (and the longest wait between relay attempts). */
  readonly sweepMs?: number;
  /** Settled transactions after which the outbox file is started afresh (its pending ones carried over). */
  readonly rotateAfter?: number;
  /** File size (bytes) after which the outbox file is started afresh. */
  readonly rotateAfterBytes?: number;
  /**
   * The longest a writer waits for its change's events to be published before it is answered anyway (the change is
   * durable; the relay publishes them in order). A broker that stalls (a JetStream leader being elected) then delays
   * answers by this much instead of failing them at the caller's timeout.
   */
  readonly publishWaitMs?: number;
}

/**
 * proper-lockfile: a holder refreshes its lock every UPDATE_MS; one not refreshed for STALE_MS belongs to a dead
 * process.
 */
const STALE_MS = 10_000;
const UPDATE_MS = 2_500;

interface OutboxFile {
  readonly log: JsonlLog<OutboxRecord>;
  readonly path: string;
  readonly release: () => Promise<void>;
}

/**
 * The one durable-change path: a write to a store that also emits events, made with a transactional outbox.
 *
 * Journaled (`commit` with the embedded store's writes): the change's writes and events are one line of this
 * instance's outbox file, fsynced — concurrent changes share the write and the fsync (group commit) — then the writes
 * are applied (visible at once; the store persists them to its tables in the background) and the events published.
 * The file is the store's write-ahead log: it is deleted only once the store has flushed every write in it, and after a
 * crash its writes are replayed, in order, before anything is served.
 *
 * Otherwise (a store of its own, e.g. Qdrant; `apply`, or `commit` with calls):
 *   1. the events are appended as an intent (fsynced), each with a message id unique to the change;
 *   2. the store write runs; if it fails, the intent is aborted and the error is the caller's — nothing changed;
 *   3. a commit record is appended (fsynced): from here the change is durable, and the caller is answered.
 * A crash between 1 and 3 leaves an intent without outcome: on restart (or, for an instance that died for good, in
 * any instance sharing the folder once its lock is stale) `landed` asks the store whether the write happened, and the
 * events are published or dropped accordingly.
 *
 * Either way the events are then published (JetStream deduplicates by message id); what cannot be published now stays
 * in the outbox and a relay publishes it, in order, as soon as the broker takes it — across restarts. So no
 * acknowledged change lacks its event, no event describes a change that did not happen, and nothing is undone behind
 * a client's back. Event-first was not taken: the stores are not projections of the stream (events carry no vectors).
 */
export class DurableChanges implements ChangeWriter {
  private readonly byStream = new Map<string, EventDef>();
  private readonly targets = new Map<string, JournalTarget>();
  /** Committed changes whose events are not all published yet, in commit order. */
  private readonly pending = new Map<string, readonly OutboxEvent[]>();
  private file!: OutboxFile;
  private settled = 0;
  private relaying?: Promise<void>;
  /** Changes whose events are published but not yet durable on the bus: no rotation drops their lines meanwhile. */
  private unsynced = 0;
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private backoffMs = 100;
  private closed = false;
  private inFlight = 0;
  /** Writers waiting for their change's events to be published (or for the broker to be found away). */
  private readonly onSent = new Map<string, () => void>();
  /**
   * Our lock went stale (a stalled process): another instance may adopt the file, so the next quiet moment starts a new
   * one.
   */
  private compromised = false;
  /** A rotation under way (new changes wait for it). */
  private rotating?: Promise<void>;
  /** Files replaced by a rotation, deleted once their stores flushed: in order, one at a time. */
  private retiring: Promise<void> = Promise.resolve();

  private constructor(private readonly options: DurableChangesOptions) {
    for (const e of options.events) this.byStream.set(e.subject, e);
    for (const t of options.targets ?? []) this.targets.set(t.name, t);
  }

  /** Opens this instance's outbox file, settles what earlier runs left, and starts the relay. */
  static async open(options: DurableChangesOptions): Promise<DurableChanges> {
    const changes = new DurableChanges(options);
    await mkdir(options.dir, { recursive: true });
    const left = changes.targets.size > 0 ? await changes.filesLeft() : [];
    await changes.startFile();
    if (left.length > 0) await changes.replay(left);
    await changes.sweep();
    changes.sweeper = setInterval(
      () => void changes.sweep().catch((err: unknown) => changes.warn('sweeping the outbox failed', err)),
      options.sweepMs ?? 5_000,
    );
    changes.sweeper.unref();
    return changes;
  }

  /** Changes committed whose events wait for the broker. */
  get waiting(): number {
    return this.pending.size;
  }

  /**
   * Makes a change: `write` applies it to the store, `events` describe it. Resolves with `write`'s result once the
   * change is durable (store and outbox); rejects, having changed nothing, when `write` or the outbox fails.
   */
  async apply<T>(events: ChangeEvents<T>, write: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const tx = randomUUID();
    const late = typeof events === 'function';
    let stored = late ? [] : events.map((e, i) => this.toStored(e, tx, i));
    const result = await this.inFile(async () => {
      await this.append({ op: 'intent', tx, events: stored });
      let written: T;
      try {
        written = await write();
      } catch (err) {
        // Without the abort record, `landed` settles the intent.
        await this.file.log.append({ op: 'abort', tx }).catch(() => undefined);
        throw err;
      }
      if (late) stored = events(written).map((e, i) => this.toStored(e, tx, i));
      // From the commit on the change is the caller's: a failure to append it leaves the intent, which `landed`
      // settles.
      await this.file.log.append(late ? { op: 'commit', tx, events: stored } : { op: 'commit', tx });
      this.pending.set(tx, stored);
      return written;
    });
    await this.published(tx);
    return result;
  }

  /**
   * Makes a change of store writes and events. Journaled writes and the events are one fsynced line; calls run as
   * `apply` runs its write. Resolves once the change is durable and its events are published (or wait for the broker).
   */
  async commit(events: readonly ChangeEvent[], writes: readonly StoreWrite[]): Promise<void> {
    const journaled = writes.filter((w): w is JournaledWrite => typeof w !== 'function');
    if (journaled.length === 0) {
      await this.apply(events, async () => {
        for (const w of writes) await (w as () => Promise<unknown>)();
      });
      return;
    }
    if (journaled.length !== writes.length) throw new Error('a change mixes journaled writes with store calls');
    // A write the outbox could not replay after a crash must not be acknowledged.
    for (const w of journaled)
      if (!this.targets.has(w.target))
        throw new Error(`the outbox was not opened with ${w.target}, which it would replay into`);
    this.assertOpen();
    const tx = randomUUID();
    const stored = events.map((e, i) => this.toStored(e, tx, i));
    await this.inFile(async () => {
      await this.append({
        op: 'change',
        tx,
        events: stored,
        writes: journaled.map((w) => ({ target: w.target, data: w.data })),
      });
      for (const w of journaled) w.apply();
      if (stored.length > 0) this.pending.set(tx, stored);
    });
    if (stored.length > 0) await this.published(tx);
    else void this.rotateIfDue();
  }

  /** Publishes what is still waiting (within `deadlineMs`), stops the relay and releases the outbox file. */
  async close(deadlineMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    clearTimeout(this.timer);
    const until = Date.now() + deadlineMs;
    while (this.pending.size > 0 && Date.now() < until) {
      await this.relay();
      if (this.pending.size > 0) await new Promise((r) => setTimeout(r, 100));
    }
    if (this.pending.size > 0)
      this.options.logger.warn(
        { waiting: this.pending.size },
        'outbox: changes still wait for the broker; the next start publishes them',
      );
    this.answerWaiting();
    await this.retiring;
    const flushed = await this.flushTargets().then(
      () => true,
      (err: unknown) => {
        this.warn('outbox: the store could not persist its writes; the next start replays them', err);
        return false;
      },
    );
    await this.file.log.close();
    // Nothing left to replay or publish: a clean stop leaves no file for the next start.
    if (flushed && this.pending.size === 0) await rm(this.file.path, { force: true });
    await this.file.release().catch(() => undefined);
  }

  private assertOpen(): void {
    if (this.closed)
      throw new AlfredError(ErrorCode.ServiceUnavailable, 'the service is shutting down; the change was not made');
  }

  /** Runs a change's records in the current file: a rotation under way finishes first, and none starts meanwhile. */
  private async inFile<T>(run: () => Promise<T>): Promise<T> {
    while (this.rotating) await this.rotating;
    this.inFlight++;
    try {
      return await run();
    } finally {
      this.inFlight--;
    }
  }

  private async append(record: OutboxRecord): Promise<void> {
    try {
      await this.file.log.append(record);
    } catch (err) {
      // The line may be on disk without its fsync: an abort makes recovery drop it.
      void this.file.log.append({ op: 'abort', tx: record.tx }).catch(() => undefined);
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        'the change could not be recorded durably and was not made',
        undefined,
        { cause: err },
      );
    }
  }

  /** The answer waits for this change's events (a history read next sees them), not for changes committed after it. */
  private async published(tx: string): Promise<void> {
    const sent = new Promise<void>((resolve) => this.onSent.set(tx, resolve));
    void this.relay();
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.publishWaitMs ?? 1_000)));
    await Promise.race([sent, stalled]);
    clearTimeout(timer);
    this.onSent.delete(tx);
  }

  private toStored(e: ChangeEvent, tx: string, i: number): OutboxEvent {
    if (!this.byStream.has(e.event.subject)) throw new Error(`the outbox does not know the event ${e.event.subject}`);
    return { subject: e.event.subject, payload: e.payload, key: e.key, msgId: e.msgId ?? `${e.key}:${tx}:${i}` };
  }

  /** Publishes waiting changes in commit order, one relay at a time; a failure leaves them for a retry with backoff. */
  private relay(): Promise<void> {
    this.relaying ??= this.publishWaiting()
      .catch((err: unknown) => this.retryLater(err))
      .finally(() => {
        this.relaying = undefined;
      });
    return this.relaying;
  }

  /** Answers the writers of changes that are durable but not yet published: their events follow with the relay. */
  private answerWaiting(): void {
    for (const resolve of this.onSent.values()) resolve();
    this.onSent.clear();
  }

  /**
   * Publishes every waiting change's events at once, in commit order (both buses store publishes in the order they are
   * made, and concurrent ones share a round trip or a write); changes are marked sent up to the first one that failed,
   * which is retried with the rest — an event already stored is deduplicated by its message id. A writer is answered
   * once its events are stored and readable; the bus makes them durable after that (`syncEvents`, one fsync for the
   * batch in-process), off the writer's path, and only then is the change marked sent: until then its outbox line,
   * already fsynced, is what holds the events, and a start after a crash publishes them again.
   */
  private async publishWaiting(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending];
      const outcomes = await Promise.all(
        batch.map(([, events]) =>
          Promise.all(
            events.map((e) =>
              this.options.bus.publish(this.byStream.get(e.subject)!, e.payload as never, {
                key: e.key,
                msgId: e.msgId,
                sync: false,
              }),
            ),
          ).then(
            () => undefined,
            (err: unknown) => err ?? new Error('publish failed'),
          ),
        ),
      );
      const stored: (typeof batch)[number][] = [];
      let failed: unknown;
      for (const [i, change] of batch.entries()) {
        failed = outcomes[i];
        if (failed !== undefined) break;
        const [tx] = change;
        this.pending.delete(tx);
        this.onSent.get(tx)?.();
        this.onSent.delete(tx);
        stored.push(change);
      }
      await this.markSent(stored);
      if (failed !== undefined) {
        this.retryLater(failed);
        return;
      }
      this.backoffMs = 100;
    }
    await this.rotateIfDue();
  }

  /** Marks changes sent once the bus holds their events durably; if it cannot, they wait to be published again. */
  private async markSent(changes: readonly (readonly [string, readonly OutboxEvent[]])[]): Promise<void> {
    if (changes.length === 0) return;
    this.unsynced += changes.length;
    try {
      await this.options.bus.syncEvents();
    } catch (err) {
      const later = [...this.pending];
      this.pending.clear();
      for (const [tx, events] of [...changes, ...later]) this.pending.set(tx, events);
      throw err;
    } finally {
      this.unsynced -= changes.length;
    }
    for (const [tx] of changes) {
      // Not fsynced: a killed process keeps it (the page cache has it); only a power loss could lose it, and then the
      // change is published again — deduplicated by its message id within the stream's window.
      void this.file.log.append({ op: 'sent', tx }, false).catch(() => undefined);
      this.settled++;
    }
  }

  private retryLater(err: unknown): void {
    this.answerWaiting();
    if (this.closed || this.timer) return;
    this.warn(`outbox: ${this.pending.size} change(s) wait for the broker; retrying in ${this.backoffMs} ms`, err);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.relay();
    }, this.backoffMs);
    this.timer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.sweepMs ?? 5_000);
  }

  /** A new file once enough changes settled (or the file grew large) and none is in flight. */
  private async rotateIfDue(): Promise<void> {
    const due =
      this.settled >= (this.options.rotateAfter ?? 10_000) ||
      this.file.log.bytes >= (this.options.rotateAfterBytes ?? 64 * 2 ** 20) ||
      this.compromised;
    if (!due || this.inFlight > 0 || this.unsynced > 0 || this.rotating || this.closed) return;
    this.compromised = false;
    this.rotating = this.rotate().finally(() => {
      this.rotating = undefined;
    });
    await this.rotating;
  }

  /**
   * Starts a new file, carrying the unpublished changes over as committed; the old one goes once the stores hold its
   * writes (until then a crash replays it, before the new one).
   */
  private async rotate(): Promise<void> {
    const old = this.file;
    await this.startFile();
    for (const [tx, events] of this.pending) {
      await this.file.log.append({ op: 'intent', tx, events });
      await this.file.log.append({ op: 'commit', tx });
    }
    this.settled = 0;
    this.retiring = this.retiring.then(() => this.retire(old));
  }

  private async retire(old: OutboxFile): Promise<void> {
    try {
      await this.flushTargets();
      await old.log.close();
      await rm(old.path, { force: true });
      await old.release().catch(() => undefined);
    } catch (err) {
      this.warn('outbox: an old file could not be retired; the next start replays it', err);
    }
  }

  private flushTargets(): Promise<unknown> {
    return Promise.all([...this.targets.values()].map((t) => t.flush()));
  }

  /**
   * A new outbox file of this instance, locked before anything creates it: another instance's sweep adopts (and
   * deletes) every unlocked file it lists, so a file written first could be taken in between and this instance's
   * changes would go to a deleted file. The lock needs no file (`realpath: false`).
   */
  private async startFile(): Promise<void> {
    const path = join(this.options.dir, outboxFileName());
    const release = await lockfile.lock(path, {
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      onCompromised: (err) => {
        this.warn('outbox: lost the lock of its own file; moving to a new one', err);
        this.compromised = true;
      },
    });
    this.file = { log: new JsonlLog<OutboxRecord>(path, 'outbox'), path, release };
  }

  /** The folder's files, oldest first (their names start with their creation time). */
  private async filesLeft(): Promise<string[]> {
    return (await readdir(this.options.dir))
      .filter((n) => n.endsWith('.jsonl'))
      .sort()
      .map((n) => join(this.options.dir, n));
  }

  /**
   * Replays what the files a stopped run left hold, oldest first: writes into their stores, which persist them before
   * the files go; unpublished changes carried over into this instance's file. Locks are not asked: with journaled
   * writes this instance is the folder's only writer, and a killed holder's lock stays "fresh" for a while.
   */
  private async replay(paths: readonly string[]): Promise<void> {
    let carried = 0;
    for (const path of paths) carried += await this.settleFile(path);
    await this.flushTargets();
    for (const path of paths) {
      await rm(path, { force: true });
      await rm(`${path}.lock`, { recursive: true, force: true });
    }
    if (carried > 0)
      this.options.logger.info?.({ changes: carried }, 'outbox: took over changes a stopped run had not published');
    void this.relay();
  }

  /**
   * Adopts the files of instances that are gone (their lock stale or absent): settles and publishes them, then deletes
   * them.
   */
  private async sweep(): Promise<void> {
    const names = (await readdir(this.options.dir))
      .filter((n) => n.endsWith('.jsonl') && join(this.options.dir, n) !== this.file.path)
      .sort();
    for (const name of names) {
      const path = join(this.options.dir, name);
      let release: () => Promise<void>;
      try {
        release = await lockfile.lock(path, { realpath: false, stale: STALE_MS });
      } catch {
        continue; // a live instance's file
      }
      try {
        if (!existsSync(path)) continue;
        const carried = await this.settleFile(path);
        if (this.targets.size > 0) await this.flushTargets();
        await rm(path, { force: true });
        if (carried > 0) {
          this.options.logger.info?.(
            { from: path, changes: carried },
            'outbox: took over changes a stopped instance had not published',
          );
          await this.relay();
        }
      } finally {
        await release().catch(() => undefined);
      }
    }
  }

  /** Replays a file's journaled writes and carries its open changes (landed or committed) into this file. */
  private async settleFile(path: string): Promise<number> {
    const { writes, open } = outboxContents(await new JsonlLog<OutboxRecord>(path).readAll());
    for (const w of writes) {
      const target = this.targets.get(w.target);
      if (!target)
        throw new Error(`the outbox file ${path} holds writes for ${w.target}, which this service does not open`);
      target.replay(w.data);
    }
    let carried = 0;
    for (const { tx, events, committed } of open) {
      if (!committed && !(await this.anyLanded(events))) continue;
      await this.file.log.append({ op: 'intent', tx, events });
      await this.file.log.append({ op: 'commit', tx });
      this.pending.set(tx, events);
      carried++;
    }
    return carried;
  }

  private async anyLanded(events: readonly OutboxEvent[]): Promise<boolean> {
    for (const e of events) if (await this.options.landed(e)) return true;
    return false;
  }

  private warn(message: string, err: unknown): void {
    this.options.logger.warn({ err: (err as Error)?.message }, message);
  }
}
