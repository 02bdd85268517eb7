import { isAlfredError } from '#errors';
import { Metrics } from '#metrics';
import type { Completion, LlmStreamEvent } from './llm.types.js';

/** A finished model call: one call, and its tokens by kind (cache reads and writes apart from uncached input). */
export function observeCompletion(model: string, completion: Completion): void {
  Metrics.modelCalls.inc({ model, outcome: 'ok' });
  const u = completion.usage;
  Metrics.modelTokens.inc({ model, kind: 'input' }, u.inputTokens);
  Metrics.modelTokens.inc({ model, kind: 'output' }, u.outputTokens);
  Metrics.modelTokens.inc({ model, kind: 'cache_read' }, u.cacheReadInputTokens ?? 0);
  Metrics.modelTokens.inc({ model, kind: 'cache_write' }, u.cacheCreationInputTokens ?? 0);
}

/** A model call that failed, by its error code. */
export function observeFailure(model: string, err: unknown): void {
  Metrics.modelCalls.inc({ model, outcome: isAlfredError(err) ? err.code : 'INTERNAL_ERROR' });
}

/** Passes a stream's events through, observing its final completion or its failure. */
export async function* observedStream(
  model: string,
  events: AsyncIterable<LlmStreamEvent>,
): AsyncIterable<LlmStreamEvent> {
  try {
    for await (const e of events) {
      if (e.type === 'message_stop') observeCompletion(model, e.completion);
      yield e;
    }
  } catch (err) {
    observeFailure(model, err);
    throw err;
  }
}
