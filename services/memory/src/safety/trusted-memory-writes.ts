import type { ConversationIngestBody, MemoryCreateBody, MemorySource, MemoryUpdateBody, Scope, Writer } from '#contracts';
import type { MemoryService } from '../memory.service.js';
import type { MemoryProvenance } from '../provenance/memory-provenance.service.js';
import type { MemoryWriteGuard } from './memory-write.guard.js';

/**
 * Every memory write in three steps: secrets are refused (or redacted) before anything is written, the
 * memory service stores as it always has, then provenance and the injection mark are recorded beside it
 * (a failure there undoes the write). The memory service's own write path stays as it is.
 */
export class TrustedMemoryWrites {
  constructor(
    private readonly guard: MemoryWriteGuard,
    private readonly memories: MemoryService,
    private readonly provenance: MemoryProvenance,
  ) {}

  async create(scope: Scope, memory: MemoryCreateBody, source: MemorySource, writer: Writer | undefined) {
    const body = await this.guard.create(scope, memory);
    const created = await this.memories.create(scope, body, source);
    const [marked] = await this.provenance.record(scope, writer, [created], [body.content], () => this.memories.delete(scope, created.id));
    return marked!;
  }

  async batchCreate(scope: Scope, items: readonly unknown[], source: MemorySource, writer: Writer | undefined) {
    const res = await this.guard.batch(scope, items, (passed) => this.memories.batchCreate(scope, passed, source));
    const undo = () => this.memories.batchDelete(scope, res.memories.map((m) => m.id));
    return { ...res, memories: await this.provenance.record(scope, writer, res.memories, res.memories.map((m) => m.content), undo) };
  }

  /** Each message is checked as the speaker said it (the stored "speaker: content" would look like a role line). */
  async ingestConversation(scope: Scope, conversation: ConversationIngestBody, writer: Writer | undefined) {
    const body = await this.guard.conversation(scope, conversation);
    const res = await this.memories.ingestConversation(scope, body);
    const undo = () => this.memories.batchDelete(scope, res.memories.map((m) => m.id));
    return { ...res, memories: await this.provenance.record(scope, writer, res.memories, body.messages.map((m) => m.content), undo) };
  }

  async update(scope: Scope, id: string, patch: MemoryUpdateBody) {
    const updated = await this.memories.update(scope, id, await this.guard.update(scope, patch));
    if (patch.content !== undefined) await this.provenance.recheck(scope, id, updated.content);
    return updated;
  }

  async delete(scope: Scope, id: string) {
    const res = await this.memories.delete(scope, id);
    await this.provenance.delete(scope, [id]);
    return res;
  }

  async batchDelete(scope: Scope, ids: readonly string[]) {
    const res = await this.memories.batchDelete(scope, ids);
    await this.provenance.delete(scope, ids);
    return res;
  }
}
