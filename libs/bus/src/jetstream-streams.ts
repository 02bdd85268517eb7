import {
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { createRacing } from './jetstream-create.js';

/** Deduplication window for message ids. */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;

export interface StreamSpec {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly retention?: RetentionPolicy;
}

export const isStreamNotFound = (err: unknown) =>
  err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound;

const missingOf = (spec: StreamSpec, config: StreamConfig) => spec.subjects.filter((s) => !config.subjects.includes(s));

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

  /** Once per spec and process; `again` looks again (the stream was found without what this process made sure of). */
  ensure(spec: StreamSpec, options: { again?: boolean } = {}): Promise<void> {
    const key = `${spec.name}|${spec.subjects.join(',')}`;
    let done = options.again ? undefined : this.ensured.get(key);
    if (!done) {
      done = this.create(spec).catch((err: unknown) => {
        this.ensured.delete(key);
        throw err;
      });
      this.ensured.set(key, done);
    }
    return done;
  }

  /**
   * Looks first, then creates or widens. Several instances do this at once when replicas start together: a create
   * that loses the race is tried again (and finds the winner's stream), and an update that another instance's update
   * overwrote is found out by the look of the next round, which adds what is still missing.
   */
  private create(spec: StreamSpec): Promise<void> {
    return createRacing(async () => {
      const jsm = await this.jsm();
      for (let round = 0; ; round++) {
        let info: StreamInfo;
        try {
          info = await jsm.streams.info(spec.name);
        } catch (err) {
          if (!isStreamNotFound(err)) throw err;
          await jsm.streams.add(this.configOf(spec));
          return;
        }
        const change = this.changeOf(spec, info.config);
        // After an update, only subjects another update took away again are worth another round (ages and copies
        // another instance set differently are that instance's configuration, not a lost write).
        if (!change || (round > 0 && missingOf(spec, info.config).length === 0)) return;
        if (round >= 5) throw new Error(`stream ${spec.name} kept losing subjects to other instances' updates`);
        await jsm.streams.update(spec.name, change);
      }
    });
  }

  private configOf(spec: StreamSpec): Partial<StreamConfig> & { name: string } {
    return {
      name: spec.name,
      subjects: [...spec.subjects],
      storage: StorageType.File,
      retention: spec.retention ?? RetentionPolicy.Limits,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: this.replicas,
      max_age: this.maxAgeOf(spec) ?? 0,
    };
  }

  /** The configuration the stream needs (its subjects widened, copies raised, age set), or undefined when it has it. */
  private changeOf(spec: StreamSpec, config: StreamConfig): StreamConfig | undefined {
    const missing = missingOf(spec, config);
    const fewerCopies = (config.num_replicas ?? 1) < this.replicas;
    const maxAge = this.maxAgeOf(spec);
    const otherAge = maxAge !== undefined && (config.max_age ?? 0) !== maxAge;
    if (missing.length === 0 && !fewerCopies && !otherAge) return undefined;
    return {
      ...config,
      subjects: [...config.subjects, ...missing],
      num_replicas: Math.max(config.num_replicas ?? 1, this.replicas),
      ...(maxAge !== undefined ? { max_age: maxAge } : {}),
    };
  }

  /**
   * Event streams (limits retention) keep events eventsMaxAgeMs (nanoseconds here; 0 = for ever); work queues are not
   * aged.
   */
  private maxAgeOf(spec: StreamSpec): number | undefined {
    if ((spec.retention ?? RetentionPolicy.Limits) !== RetentionPolicy.Limits) return undefined;
    return nanos(this.eventsMaxAgeMs);
  }
}
