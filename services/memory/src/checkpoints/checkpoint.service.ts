import {
  CHECKPOINT_CONTEXT_MESSAGES,
  CheckpointEvents,
  ErrorCode,
  SESSION_APPEND_MAX,
  SessionRoutes,
  type Checkpoint,
  type CheckpointListQuery,
  type CheckpointResumed,
  type CheckpointSaveBody,
  type ResumeLevel,
  type Scope,
  type SessionMessage,
  type SessionView,
  type Writer,
} from '#contracts';
import type { ChangeWriter } from '#durable';
import type { Bus, MessageContext } from '#bus';
import type { Embedder } from '#embeddings';
import { AlfredError } from '#errors';
import { randomUUID } from 'node:crypto';
import { checkpointText, type CheckpointRepository } from './checkpoint.repository.js';
import { provenanceView, writtenBy } from '../provenance/provenance-fields.js';
import { MemoryWriteGuard } from '../safety/memory-write.guard.js';
import { messagesDigest, resumeMessages } from './resume-messages.js';

/**
 * Named snapshots of work in progress. A checkpoint keeps its session by reference (id, version, message
 * count, digest of those messages), read and written through the session routes of the agent runtime.
 * Saved only when its event is on the durable stream, like memories.
 */
export class CheckpointService {
  constructor(
    private readonly repo: CheckpointRepository,
    private readonly embedder: Embedder,
    private readonly bus: Bus,
    private readonly changes: ChangeWriter,
    private readonly guard = new MemoryWriteGuard(),
    private readonly now: () => Date = () => new Date(),
    private readonly contextSize = CHECKPOINT_CONTEXT_MESSAGES,
  ) {}

  /** Deletes every one of the agent's (its agent is being deleted); returns how many. */
  purge(scope: Scope): Promise<number> {
    return this.repo.purge(scope);
  }

  /** Secrets refused (or redacted) first; the checkpoint, who wrote it and its injection mark are one record. */
  async save(scope: Scope, saved: CheckpointSaveBody, writer?: Writer, ctx?: MessageContext): Promise<Checkpoint> {
    const body = await this.guard.record(scope, saved);
    const session = body.session_id ? await this.session(scope, body.session_id, ctx) : undefined;
    const checkpoint: Checkpoint = {
      id: randomUUID(),
      name: body.name,
      summary: body.summary,
      done: body.done,
      next: body.next,
      tags: [...new Set(body.tags)],
      session: session
        ? {
            id: session.id,
            version: session.version,
            message_count: session.message_count,
            digest: messagesDigest(session.messages),
          }
        : null,
      created_at: this.now().toISOString(),
    };
    const [vector] = await this.embedder.embed([checkpointText(checkpoint)]);
    const written = writtenBy(writer, checkpoint.created_at, [body.summary, ...body.done, ...body.next].join('\n'));
    const change = {
      kind: 'saved' as const,
      id: checkpoint.id,
      tenant: scope.tenant,
      agent: scope.agent,
      at: checkpoint.created_at,
      checkpoint,
    };
    await this.changes.commit(
      [{ event: CheckpointEvents.saved, payload: change, key: checkpoint.id, msgId: `${checkpoint.id}:saved` }],
      [this.repo.saveWrite(scope, checkpoint, vector!, written)],
    );
    return { ...checkpoint, ...provenanceView(scope, written) };
  }

  async list(scope: Scope, query: CheckpointListQuery) {
    const { checkpoints, total } = await this.repo.list(scope, query);
    return {
      checkpoints,
      pagination: {
        total,
        limit: query.limit,
        offset: query.offset,
        has_more: query.offset + checkpoints.length < total,
      },
    };
  }

  async get(scope: Scope, id: string): Promise<Checkpoint> {
    const found = await this.repo.get(scope, id);
    if (!found) throw AlfredError.notFound('Checkpoint', id);
    return found;
  }

  /** Starts a new session of the same agent seeded at `level` (see resumeMessages). */
  async resume(scope: Scope, id: string, level: ResumeLevel, ctx?: MessageContext): Promise<CheckpointResumed> {
    const checkpoint = await this.get(scope, id);
    const saved = level === 'summary' ? [] : await this.savedMessages(scope, checkpoint, ctx);
    const messages = resumeMessages(checkpoint, level, saved, this.contextSize);
    const options = ctx ? { context: ctx } : {};
    const created = await this.bus.request(
      SessionRoutes.create,
      { scope, metadata: { resumed_from: { checkpoint_id: id, name: checkpoint.name, level } } },
      options,
    );
    try {
      let last = { version: created.version, message_count: created.message_count };
      for (let i = 0; i < messages.length; i += SESSION_APPEND_MAX) {
        const chunk = messages.slice(i, i + SESSION_APPEND_MAX);
        last = await this.bus.request(SessionRoutes.append, { scope, id: created.id, messages: chunk }, options);
      }
      return {
        checkpoint_id: id,
        level,
        session_id: created.id,
        message_count: last.message_count,
        session_version: last.version,
      };
    } catch (err) {
      await this.bus.request(SessionRoutes.delete, { scope, id: created.id }, options).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The referenced messages as they were saved; a deleted or rewritten session is a CONFLICT that names the way out.
   */
  private async savedMessages(scope: Scope, checkpoint: Checkpoint, ctx?: MessageContext): Promise<SessionMessage[]> {
    const ref = checkpoint.session;
    const conflict = (reason: string, why: string) =>
      new AlfredError(
        ErrorCode.Conflict,
        `checkpoint ${checkpoint.id} cannot be resumed with messages: ${why}; resume it at level "summary"`,
        {
          reason,
          session_id: ref?.id ?? null,
        },
      );
    if (!ref) throw conflict('no_session', 'it was saved without a session');
    const session = await this.session(scope, ref.id, ctx).catch((err: unknown) => {
      if (err instanceof AlfredError && err.code === ErrorCode.NotFound)
        throw conflict('session_deleted', `session ${ref.id} no longer exists`);
      throw err;
    });
    const prefix = session.messages.slice(0, ref.message_count);
    if (prefix.length < ref.message_count || messagesDigest(prefix) !== ref.digest) {
      throw conflict('session_changed', `session ${ref.id} was rewritten since the checkpoint (compacted or replaced)`);
    }
    return prefix;
  }

  private session(scope: Scope, id: string, ctx?: MessageContext): Promise<SessionView> {
    return this.bus.request(SessionRoutes.get, { scope, id }, ctx ? { context: ctx } : {});
  }
}
