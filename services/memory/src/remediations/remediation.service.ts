import {
  RemediationEvents,
  type FeedbackBody,
  type FeedbackResult,
  type Remediation,
  type RemediationChange,
  type RemediationRecordBody,
  type RemediationSearchQuery,
  type RemediationSearchResponse,
  type Scope,
  type Writer,
} from '#contracts';
import type { ChangeWriter } from '#durable';
import type { Embedder } from '#embeddings';
import { AlfredError } from '#errors';
import { randomUUID } from 'node:crypto';
import { candidatePool, type Ranker } from '#ranking';
import { KeyedLock } from '../feedback/keyed-lock.js';
import { errorSignature } from './error-normaliser.js';
import { viewOf, type RemediationRepository } from './remediation.repository.js';
import { writtenBy, type ProvenanceQuery } from '../provenance/provenance-fields.js';
import { MemoryWriteGuard } from '../safety/memory-write.guard.js';

/**
 * Error fixes: stored with a machine-independent signature, found again by hybrid search over it, ranked
 * with the same feedback rule as memories. Like memories, every write goes through the durable-change path.
 */
export class RemediationService {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly repo: RemediationRepository,
    private readonly embedder: Embedder,
    private readonly changes: ChangeWriter,
    private readonly ranker: Ranker,
    private readonly guard = new MemoryWriteGuard(),
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Deletes every one of the agent's (its agent is being deleted); returns how many. */
  purge(scope: Scope): Promise<number> {
    return this.repo.purge(scope);
  }

  /** Secrets refused (or redacted) first; the fix, who wrote it and its injection mark are one record. */
  async record(scope: Scope, recorded: RemediationRecordBody, writer?: Writer): Promise<Remediation> {
    const body = await this.guard.record(scope, recorded);
    const remediation: Remediation = {
      id: randomUUID(),
      error_message: body.error_message,
      ...(body.stack ? { stack: body.stack } : {}),
      ...(body.tool ? { tool: body.tool } : {}),
      tags: [...new Set(body.tags)],
      fix: body.fix,
      ...(body.context ? { context: body.context } : {}),
      signature: errorSignature(body),
      feedback: { helpful: 0, unhelpful: 0 },
      created_at: this.now().toISOString(),
    };
    const [vector] = await this.embedder.embed([remediation.signature]);
    const record = {
      remediation,
      written: writtenBy(writer, remediation.created_at, [body.error_message, body.fix].join('\n')),
    };
    await this.changes.commit(
      [changeOf(scope, 'recorded', remediation)],
      [this.repo.saveWrite(scope, record, vector!, 'insert')],
    );
    return viewOf(scope, record);
  }

  async get(scope: Scope, id: string): Promise<Remediation> {
    return viewOf(scope, await this.mustGet(scope, id));
  }

  private async mustGet(scope: Scope, id: string) {
    const found = await this.repo.get(scope, id);
    if (!found) throw AlfredError.notFound('Remediation', id);
    return found;
  }

  async search(scope: Scope, query: RemediationSearchQuery & ProvenanceQuery): Promise<RemediationSearchResponse> {
    const started = performance.now();
    const signature = errorSignature({ error_message: query.q });
    const vector = this.ranker.uses('dense') ? (await this.embedder.embed([signature]))[0] : undefined;
    const { hits, total } = await this.repo.search(scope, {
      ...(vector ? { vector } : {}),
      text: signature,
      limit: candidatePool(query.limit),
      minScore: this.ranker.relevanceFloor(query.min_score),
      fuse: (signals) => this.ranker.relevance(signals),
      tool: query.tool,
      provenance: query,
    });
    const ranked = this.ranker.rank(
      hits.map(({ remediation, signals }) => ({
        item: remediation,
        evidence: { ...signals, feedback: remediation.feedback },
      })),
      { minScore: query.min_score, limit: query.limit, key: (r) => r.id },
    );
    return {
      results: ranked.hits.map(({ item, score }) => ({ ...item, score })),
      query: query.q,
      signature,
      total: Math.max(ranked.hits.length, total - ranked.dropped),
      search_time_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  }

  rate(scope: Scope, id: string, body: FeedbackBody): Promise<FeedbackResult> {
    return this.lock.run(`${scope.tenant}\u0000${scope.agent}\u0000${id}`, async () => {
      const { remediation: before, written } = await this.mustGet(scope, id);
      const at = this.now().toISOString();
      const after: Remediation = {
        ...before,
        feedback: {
          helpful: before.feedback.helpful + (body.helpful ? 1 : 0),
          unhelpful: before.feedback.unhelpful + (body.helpful ? 0 : 1),
        },
        updated_at: at,
      };
      const [vector] = await this.embedder.embed([after.signature]);
      const record = { remediation: after, ...(written ? { written } : {}) };
      await this.changes.commit(
        [changeOf(scope, 'rated', after, body)],
        [this.repo.saveWrite(scope, record, vector!, 'upsert')],
      );
      return { id, feedback: after.feedback, timestamp: at };
    });
  }
}

function changeOf(scope: Scope, kind: RemediationChange['kind'], remediation: Remediation, feedback?: FeedbackBody) {
  const payload: RemediationChange = {
    kind,
    id: remediation.id,
    tenant: scope.tenant,
    agent: scope.agent,
    at: remediation.updated_at ?? remediation.created_at,
    remediation,
    ...(feedback ? { feedback } : {}),
  };
  return { event: RemediationEvents[kind], payload, key: remediation.id };
}
