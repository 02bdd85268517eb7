import {
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** Deduplication window for message ids. */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;

export interface StreamSpec {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly retention?: RetentionPolicy;
}

export const isStreamNotFound = (err: unknown) =>
  err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;

/** Creates streams on first use and widens their subjects when another definition shares them; cached. */
export class JetStreamStreams {
  private readonly ensured = new Map<string, Promise<void>>();

  constructor(
    private readonly jsm: () => Promise<JetStreamManager>,
    /** num_replicas of the streams it creates; a stream found with fewer is raised to it (never lowered). */
    private readonly replicas = 1,
    /** max_age of event streams (limits retention; 0: for ever); a stream found with another is set to it. */
    private readonly eventsMaxAgeMs = 0,
  ) {}

  ensure(spec: StreamSpec): Promise<void> {
    const key = `${spec.name}|${spec.subjects.join(',')}`;
    let done = this.ensured.get(key);
    if (!done) {
      done = this.create(spec).catch((err: unknown) => {
        this.ensured.delete(key);
        throw err;
      });
      this.ensured.set(key, done);
    }
    return done;
  }

  private async create(spec: StreamSpec, attempt = 1): Promise<void> {
    const jsm = await this.jsm();
    try {
      const info = await jsm.streams.info(spec.name);
      const missing = spec.subjects.filter((s) => !info.config.subjects.includes(s));
      const fewerCopies = (info.config.num_replicas ?? 1) < this.replicas;
      const maxAge = this.maxAgeOf(spec);
      const otherAge = maxAge !== undefined && (info.config.max_age ?? 0) !== maxAge;
      if (missing.length > 0 || fewerCopies || otherAge) {
        await jsm.streams.update(spec.name, {
          ...info.config,
          subjects: [...info.config.subjects, ...missing],
          num_replicas: Math.max(info.config.num_replicas ?? 1, this.replicas),
          ...(maxAge !== undefined ? { max_age: maxAge } : {}),
        });
      }
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
      try {
        await jsm.streams.add({
          name: spec.name,
          subjects: [...spec.subjects],
          storage: StorageType.File,
          retention: spec.retention ?? RetentionPolicy.Limits,
          duplicate_window: nanos(DUPLICATE_WINDOW_MS),
          num_replicas: this.replicas,
          max_age: this.maxAgeOf(spec) ?? 0,
        });
      } catch (addErr) {
        // another instance may have created it between our info and add: look again, once
        if (attempt > 1) throw addErr;
        await this.create(spec, attempt + 1);
      }
    }
  }

  /** Event streams (limits retention) keep events eventsMaxAgeMs (nanoseconds here; 0 = for ever); work queues are not aged. */
  private maxAgeOf(spec: StreamSpec): number | undefined {
    if ((spec.retention ?? RetentionPolicy.Limits) !== RetentionPolicy.Limits) return undefined;
    return nanos(this.eventsMaxAgeMs);
  }
}
