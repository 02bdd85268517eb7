import type { ConversationIngestBody, MemoryCreateBody, MemoryUpdateBody, Scope } from '#contracts';
import { SecretDetectedError, SecretGuard } from '#content-safety';

/**
 * The memory service's secret check: every text a write would store passes it first, so a refused write changes
 * nothing. Texts of one request are checked together (the scanner scans concurrent checks in one pass). A batch is
 * partial, as the batch endpoint is for any invalid item (an item with a secret is reported by its index, the others
 * are stored); a conversation is one unit.
 */
export class MemoryWriteGuard {
  constructor(private readonly secrets: SecretGuard = new SecretGuard()) {}

  async create(scope: Scope, body: MemoryCreateBody): Promise<MemoryCreateBody> {
    return { ...body, content: await this.secrets.admit(scope.tenant, body.content, { field: 'content' }) };
  }

  async update(scope: Scope, patch: MemoryUpdateBody): Promise<MemoryUpdateBody> {
    if (patch.content === undefined) return patch;
    return { ...patch, content: await this.secrets.admit(scope.tenant, patch.content, { field: 'content' }) };
  }

  async conversation(scope: Scope, body: ConversationIngestBody): Promise<ConversationIngestBody> {
    const messages = await Promise.all(
      body.messages.map(async (m, index) => ({
        ...m,
        content: await this.secrets.admit(scope.tenant, m.content, { field: 'messages.content', index }),
      })),
    );
    return { ...body, messages };
  }

  /** Checkpoints and remediations: every string they hold (task, state, error text, fix). */
  record<T>(scope: Scope, value: T): Promise<T> {
    return this.secrets.admitAll(scope.tenant, value);
  }

  /** Each item checked on its own: the refused ones come back as errors at their index, the others admitted. */
  async batch<I extends { index: number; body: MemoryCreateBody }>(
    scope: Scope,
    items: readonly I[],
  ): Promise<{ passed: I[]; refused: Array<{ index: number; error: string }> }> {
    const outcomes = await Promise.all(
      items.map(async (item) => {
        try {
          return {
            item: {
              ...item,
              body: {
                ...item.body,
                content: await this.secrets.admit(scope.tenant, item.body.content, {
                  field: 'content',
                  index: item.index,
                }),
              },
            },
          };
        } catch (err) {
          if (!(err instanceof SecretDetectedError)) throw err;
          return { refused: { index: item.index, error: `${err.code}: ${err.message}` } };
        }
      }),
    );
    return {
      passed: outcomes.flatMap((o) => (o.item ? [o.item] : [])),
      refused: outcomes.flatMap((o) => (o.refused ? [o.refused] : [])),
    };
  }
}
