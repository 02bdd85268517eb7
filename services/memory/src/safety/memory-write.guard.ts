import type { ConversationIngestBody, MemoryCreateBody, MemoryUpdateBody, Scope } from '#contracts';
import { SecretDetectedError, type SecretGuard } from '#content-safety';

/** A batch answer as MemoryService gives it: errors are indexed by the position in the batch it was given. */
interface BatchResult<M> {
  created: number;
  memories: M[];
  errors: Array<{ index: number; error: string }>;
}

/**
 * The memory service's entry check: every text a write would store passes the secret guard first, so a
 * refused write changes nothing. Batches keep the seed's partial semantics (an item with a secret is
 * reported by its index like any invalid item, the others are stored); a conversation is one unit.
 */
export class MemoryWriteGuard {
  constructor(private readonly secrets: SecretGuard) {}

  async create(scope: Scope, body: MemoryCreateBody): Promise<MemoryCreateBody> {
    return { ...body, content: await this.secrets.admit(scope.tenant, body.content, { field: 'content' }) };
  }

  async update(scope: Scope, patch: MemoryUpdateBody): Promise<MemoryUpdateBody> {
    if (patch.content === undefined) return patch;
    return { ...patch, content: await this.secrets.admit(scope.tenant, patch.content, { field: 'content' }) };
  }

  async conversation(scope: Scope, body: ConversationIngestBody): Promise<ConversationIngestBody> {
    const messages = [];
    for (const [index, m] of body.messages.entries()) {
      messages.push({ ...m, content: await this.secrets.admit(scope.tenant, m.content, { field: 'messages.content', index }) });
    }
    return { ...body, messages };
  }

  /** Checkpoints and remediations: every string they hold (task, state, error text, fix). */
  record<T>(scope: Scope, value: T): Promise<T> {
    return this.secrets.admitAll(scope.tenant, value);
  }

  /** Runs the batch on the items without secrets; refused items join the answer's errors at their own index. */
  async batch<M>(scope: Scope, items: readonly unknown[], run: (items: unknown[]) => Promise<BatchResult<M>>): Promise<BatchResult<M>> {
    const passed: unknown[] = [];
    const positions: number[] = [];
    const refused: Array<{ index: number; error: string }> = [];
    for (const [index, item] of items.entries()) {
      const content = contentOf(item);
      try {
        const admitted = content === undefined ? item : { ...(item as object), content: await this.secrets.admit(scope.tenant, content, { field: 'content', index }) };
        passed.push(admitted);
        positions.push(index);
      } catch (err) {
        if (!(err instanceof SecretDetectedError)) throw err;
        refused.push({ index, error: `${err.code}: ${err.message}` });
      }
    }
    const result = passed.length > 0 ? await run(passed) : { created: 0, memories: [], errors: [] };
    const errors = [...result.errors.map((e) => ({ ...e, index: positions[e.index]! })), ...refused].sort((a, b) => a.index - b.index);
    return { ...result, errors };
  }
}

function contentOf(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const content = (item as { content?: unknown }).content;
  return typeof content === 'string' ? content : undefined;
}
