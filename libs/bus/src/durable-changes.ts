import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { ErrorCode, type EventDef, type PayloadOf } from '#contracts';
import { AlfredError } from '#errors';
import type { Bus } from './bus.js';
import type { BusLogger } from './codec.js';
import { JsonlLog } from './jsonl-log.js';

/** One event a change emits. `msgId` defaults to one unique to this change (the outbox's transaction id). */
export interface ChangeEvent<E extends EventDef = EventDef> {
  readonly event: E;
  readonly payload: PayloadOf<E>;
  readonly key: string;
  readonly msgId?: string;
}

/** An event as the outbox keeps it: its subject names its definition in the catalogue given at open. */
export interface OutboxEvent {
  readonly subject: string;
  readonly payload: unknown;
  readonly key: string;
  readonly msgId: string;
}

type OutboxRecord =
  | { readonly op: 'intent'; readonly tx: string; readonly events: readonly OutboxEvent[] }
  /** A commit carries the events when they depend on the write's result (they were not known at the intent). */
  | { readonly op: 'commit'; readonly tx: string; readonly events?: readonly OutboxEvent[] }
  | { readonly op: 'abort' | 'sent'; readonly tx: string };

/**
 * After a crash between a change's intent and its outcome: did the store write land? Asked once per event of the
 * interrupted change (true for any = it landed, so its events are published; false for all = it did not).
 */
export type LandedCheck = (event: OutboxEvent) => Promise<boolean>;

/** What a service writing durable changes needs of DurableChanges. */
export interface ChangeWriter {
  apply<T>(events: ChangeEvents<T>, write: () => Promise<T>): Promise<T>;
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
  readonly logger: BusLogger & { info?(obj: object, msg: string): void };
  /** How often files of dead instances are looked for (and the longest wait between relay attempts). */
  readonly sweepMs?: number;
  /** Settled transactions after which the outbox file is started afresh (its pending ones carried over). */
  readonly rotateAfter?: number;
}

/** proper-lockfile: a holder refreshes its lock every UPDATE_MS; one not refreshed for STALE_MS belongs to a dead process. */
const STALE_MS = 10_000;
const UPDATE_MS = 2_500;

/**
 * The one durable-change path: a write to a store that also emits events, made with a transactional outbox.
 *
 *   1. the change's events are appended to this instance's outbox file (fsynced) as an intent, each with a message id
 *      unique to the change;
 *   2. the store write runs; if it fails, the intent is aborted and the error is the caller's — nothing changed;
 *   3. a commit record is appended (fsynced): from here the change is durable, and the caller is answered;
 *   4. the events are published (JetStream deduplicates by message id); what cannot be published now stays in the
 *      outbox and a relay publishes it, in order, as soon as the broker takes it — across restarts.
 *
 * A crash between 1 and 3 leaves an intent without outcome: on restart (or, for an instance that died for good, in
 * any instance sharing the folder once its lock is stale) `landed` asks the store whether the write happened, and the
 * events are published or dropped accordingly. So no acknowledged change lacks its event, no event describes a
 * change that did not happen, and nothing is undone behind a client's back.
 *
 * Why not event-first: the stores are not projections of the stream (the events carry no vectors, and LanceDB or
 * Qdrant have their own state), so an event published before a failed write would describe a change that never
 * happened, and fixing that needs the same "did it land?" question plus a compensating event. The outbox asks it
 * only after a crash, and keeps a write available while the broker is briefly away.
 */
export class DurableChanges implements ChangeWriter {
  private readonly byStream = new Map<string, EventDef>();
  /** Committed changes whose events are not all published yet, in commit order. */
  private readonly pending = new Map<string, readonly OutboxEvent[]>();
  private log!: JsonlLog<OutboxRecord>;
  private logPath!: string;
  private release?: () => Promise<void>;
  private settled = 0;
  private relaying?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private backoffMs = 100;
  private closed = false;
  private inFlight = 0;
  /** Writers waiting for their change's events to be published (or for the broker to be found away). */
  private readonly onSent = new Map<string, () => void>();
  /** Our lock went stale (a stalled process): another instance may adopt the file, so the next quiet moment starts a new one. */
  private compromised = false;
  /** A rotation under way (new changes wait for it). */
  private rotating?: Promise<void>;

  private constructor(private readonly options: DurableChangesOptions) {
    for (const e of options.events) this.byStream.set(e.subject, e);
  }

  /** Opens this instance's outbox file, settles what earlier runs left, and starts the relay. */
  static async open(options: DurableChangesOptions): Promise<DurableChanges> {
    const changes = new DurableChanges(options);
    await mkdir(options.dir, { recursive: true });
    await changes.startFile();
    await changes.sweep();
    changes.sweeper = setInterval(() => void changes.sweep().catch((err: unknown) => changes.warn('sweeping the outbox failed', err)), options.sweepMs ?? 5_000);
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
    if (this.closed) throw new AlfredError(ErrorCode.ServiceUnavailable, 'the service is shutting down; the change was not made');
    const tx = randomUUID();
    const late = typeof events === 'function';
    let stored = late ? [] : events.map((e, i) => this.toStored(e, tx, i));
    // A change's records all go to one file: wait for a rotation under way to finish first.
    while (this.rotating) await this.rotating;
    // In flight from the intent to the commit (or abort): no rotation may start a new file meanwhile.
    this.inFlight++;
    let result: T;
    try {
      try {
        await this.log.append({ op: 'intent', tx, events: stored });
      } catch (err) {
        throw new AlfredError(ErrorCode.ServiceUnavailable, 'the change could not be recorded durably and was not made', undefined, { cause: err });
      }
      try {
        result = await write();
      } catch (err) {
        await this.log.append({ op: 'abort', tx }).catch(() => undefined); // without it, `landed` settles the intent
        throw err;
      }
      if (late) stored = events(result).map((e, i) => this.toStored(e, tx, i));
      // From the commit on the change is the caller's: a failure to append it leaves the intent, which `landed` settles.
      await this.log.append(late ? { op: 'commit', tx, events: stored } : { op: 'commit', tx });
      this.pending.set(tx, stored);
    } finally {
      this.inFlight--;
    }
    // The answer waits for this change's events (a history read next sees them), not for every change committed after
    // it while the relay runs: under a steady load the relay never runs dry, and the first writer would wait for all.
    const published = new Promise<void>((resolve) => this.onSent.set(tx, resolve));
    void this.relay();
    await published;
    return result;
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
    if (this.pending.size > 0) this.options.logger.warn({ waiting: this.pending.size }, 'outbox: changes still wait for the broker; the next start publishes them');
    this.answerWaiting();
    await this.log.close();
    await this.release?.().catch(() => undefined);
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
   * made, and concurrent ones share a round trip or an fsync); changes are marked sent up to the first one that
   * failed, which is retried with the rest — an event already stored is deduplicated by its message id.
   */
  private async publishWaiting(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending];
      const outcomes = await Promise.all(
        batch.map(([, events]) =>
          Promise.all(events.map((e) => this.options.bus.publish(this.byStream.get(e.subject)!, e.payload as never, { key: e.key, msgId: e.msgId }))).then(
            () => undefined,
            (err: unknown) => err ?? new Error('publish failed'),
          ),
        ),
      );
      for (const [i, [tx]] of batch.entries()) {
        const failed = outcomes[i];
        if (failed !== undefined) {
          this.retryLater(failed);
          return;
        }
        this.pending.delete(tx);
        this.onSent.get(tx)?.();
        this.onSent.delete(tx);
        this.backoffMs = 100;
        // Not fsynced: a killed process keeps it (the page cache has it); only a power loss could lose it, and then the
        // change is published again — deduplicated by its message id within the stream's window.
        void this.log.append({ op: 'sent', tx }, false).catch(() => undefined);
        this.settled++;
      }
    }
    await this.rotateIfDue();
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

  /** A new file once enough changes settled and none is in flight; pending ones are carried over as committed intents. */
  private async rotateIfDue(): Promise<void> {
    if ((this.settled < (this.options.rotateAfter ?? 10_000) && !this.compromised) || this.inFlight > 0 || this.rotating) return;
    this.compromised = false;
    this.rotating = this.rotate().finally(() => {
      this.rotating = undefined;
    });
    await this.rotating;
  }

  private async rotate(): Promise<void> {
    const old = { log: this.log, release: this.release, path: this.logPath };
    await this.startFile();
    for (const [tx, events] of this.pending) {
      await this.log.append({ op: 'intent', tx, events });
      await this.log.append({ op: 'commit', tx });
    }
    this.settled = 0;
    await old.log.close();
    await rm(old.path, { force: true });
    await old.release?.().catch(() => undefined);
  }

  /**
   * A new outbox file of this instance, locked before anything creates it: another instance's sweep adopts (and
   * deletes) every unlocked file it lists, so a file written first could be taken in between and this instance's
   * changes would go to a deleted file. The lock needs no file (`realpath: false`).
   */
  private async startFile(): Promise<void> {
    this.logPath = join(this.options.dir, `${randomUUID()}.jsonl`);
    this.log = new JsonlLog<OutboxRecord>(this.logPath);
    this.release = await lockfile.lock(this.logPath, {
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      onCompromised: (err) => {
        this.warn('outbox: lost the lock of its own file; moving to a new one', err);
        this.compromised = true;
      },
    });
  }

  /** Adopts the files of instances that are gone (their lock stale or absent): settles and publishes them, then deletes them. */
  private async sweep(): Promise<void> {
    const names = (await readdir(this.options.dir)).filter((n) => n.endsWith('.jsonl') && join(this.options.dir, n) !== this.logPath);
    for (const name of names) {
      const path = join(this.options.dir, name);
      let release: () => Promise<void>;
      try {
        release = await lockfile.lock(path, { realpath: false, stale: STALE_MS });
      } catch {
        continue; // a live instance's file
      }
      try {
        if (existsSync(path)) await this.adopt(path);
      } finally {
        await release().catch(() => undefined);
      }
    }
  }

  private async adopt(path: string): Promise<void> {
    const records = await new JsonlLog<OutboxRecord>(path).readAll();
    const intents = new Map<string, readonly OutboxEvent[]>();
    const outcome = new Map<string, 'commit' | 'abort' | 'sent'>();
    for (const r of records) {
      if (r.op === 'intent') intents.set(r.tx, r.events);
      else if (outcome.get(r.tx) !== 'sent') outcome.set(r.tx, r.op);
      if (r.op === 'commit' && r.events) intents.set(r.tx, r.events);
    }
    let carried = 0;
    for (const [tx, events] of intents) {
      const state = outcome.get(tx);
      if (state === 'sent' || state === 'abort' || events.length === 0) continue;
      if (state === undefined && !(await this.anyLanded(events))) continue;
      await this.log.append({ op: 'intent', tx, events });
      await this.log.append({ op: 'commit', tx });
      this.pending.set(tx, events);
      carried++;
    }
    await rm(path, { force: true });
    if (carried > 0) {
      this.options.logger.info?.({ from: path, changes: carried }, 'outbox: took over changes a stopped instance had not published');
      await this.relay();
    }
  }

  private async anyLanded(events: readonly OutboxEvent[]): Promise<boolean> {
    for (const e of events) if (await this.options.landed(e)) return true;
    return false;
  }

  private warn(message: string, err: unknown): void {
    this.options.logger.warn({ err: (err as Error)?.message }, message);
  }
}
