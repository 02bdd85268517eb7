import { MemoryRoutes, type DistillBody, type DistillCompleted, type Scope } from '#contracts';
import type { AgentFileAccess } from '#agent-files';
import type { Bus, MessageContext } from '#bus';
import { modelOrFallback, type LlmClient } from '#llm';
import { redactSecrets, scanSecrets } from '#content-safety';
import type { SessionAccess } from '#sessions';
import { readMemories, readSessions, storedInsightIds } from './distill-inputs.js';
import { distillByClustering, type DistillItem, type Insight } from './insight-clustering.js';
import { distillWithModel } from './model-distiller.js';
import { appendInsights, isKnown, parseInsights } from './memory-file.js';
import { contentWords, coverage, insightId } from './text-similarity.js';

export interface DistillRun {
  readonly scope: Scope;
  readonly request: DistillBody;
  /** Where `recent` starts: the agent's last completed distillation (undefined: everything). */
  readonly lastRun?: string;
  readonly context?: MessageContext;
  /** Checked before every write: a run cut off by shutdown never writes after another instance took over. */
  readonly signal?: AbortSignal;
}

/** Extracts insights from memories and sessions into MEMORY.md and into memories with source "memory". */
export class DistillerService {
  constructor(
    private readonly bus: Bus,
    private readonly files: AgentFileAccess,
    private readonly sessions: Pick<SessionAccess, 'list' | 'get'>,
    private readonly llm: LlmClient,
    private readonly requireModel: boolean,
  ) {}

  async run(run: DistillRun): Promise<DistillCompleted> {
    const started = Date.now();
    const mode = modelOrFallback(this.llm, this.requireModel);
    const since = maxIso(run.request.since, run.request.scope === 'recent' ? run.lastRun : undefined);
    const memories = await readMemories(this.bus, run.scope, since, run.context);
    const items = focusOn([...memories, ...(await readSessions(this.sessions, run.scope, since))], run.request.focus);
    const file = await this.files.read(run.scope, 'memory');
    const known = parseInsights(file.content);
    const candidates =
      items.length === 0
        ? []
        : mode === 'model'
          ? await distillWithModel(
              this.llm,
              items,
              known.map((k) => k.text),
              run.request.focus,
            )
          : distillByClustering(items);
    const fresh = newInsights(await withoutSecrets(candidates), known);
    run.signal?.throwIfAborted();
    await this.storeMemories(run, fresh);
    if (fresh.length > 0) {
      run.signal?.throwIfAborted();
      const reason = `distill: ${fresh.length} insight(s)${run.request.focus ? ` on ${run.request.focus}` : ''}`;
      await this.files.write(run.scope, 'memory', appendInsights(file.content, fresh), {
        reason,
        expectedVersion: file.version,
      });
    }
    return {
      status: 'completed',
      insights_added: fresh.length,
      memory_file: 'MEMORY.md',
      processed_memories: memories.length,
      duration_ms: Date.now() - started,
      method: mode === 'model' ? 'model' : 'clustering',
    };
  }

  /** Stores each insight as a memory once: ids already tagged on stored memories are skipped (safe on retry). */
  private async storeMemories(run: DistillRun, insights: readonly Insight[]): Promise<void> {
    const stored = await storedInsightIds(this.bus, run.scope, run.context);
    const missing = insights.filter((i) => !stored.has(insightId(i.text)));
    if (missing.length === 0) return;
    run.signal?.throwIfAborted();
    const memories = missing.map((i) => ({
      content: i.text,
      importance: i.importance,
      tags: ['insight', `insight-${insightId(i.text)}`],
    }));
    await this.bus.request(
      MemoryRoutes.batchCreate,
      { scope: run.scope, memories, source: 'memory', writer: { via: 'distill' } },
      { context: run.context },
    );
  }
}

/**
 * Insights are derived text (sessions are not scanned when they are written), so a credential in one is
 * redacted rather than refused: refusing would fail the job on every retry. Nothing secret reaches MEMORY.md.
 */
export async function withoutSecrets(insights: readonly Insight[]): Promise<Insight[]> {
  const out: Insight[] = [];
  for (const i of insights) {
    const findings = await scanSecrets(i.text);
    out.push(findings.length === 0 ? i : { ...i, text: redactSecrets(i.text, findings) });
  }
  return out;
}

/** Candidates not already in MEMORY.md and not repeating each other. */
export function newInsights(candidates: readonly Insight[], known: ReturnType<typeof parseInsights>): Insight[] {
  const ids = new Set(known.map((k) => k.id));
  const out: Insight[] = [];
  for (const c of candidates) {
    if (isKnown(c.text, known, ids)) continue;
    if (
      out.some(
        (o) => insightId(o.text) === insightId(c.text) || coverage(contentWords(c.text), contentWords(o.text)) >= 0.8,
      )
    )
      continue;
    out.push(c);
  }
  return out;
}

/** With a focus, only items sharing a content word with it. */
function focusOn(items: DistillItem[], focus: string | undefined): DistillItem[] {
  if (!focus) return items;
  const words = contentWords(focus);
  return items.filter((i) => coverage(words, contentWords(i.text)) > 0);
}

/** The later of two instants, in UTC ISO form (memory timestamps compare as strings). */
function maxIso(a: string | undefined, b: string | undefined): string | undefined {
  const times = [a, b].filter((t): t is string => t !== undefined).map((t) => new Date(t).getTime());
  return times.length === 0 ? undefined : new Date(Math.max(...times)).toISOString();
}
