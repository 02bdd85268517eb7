import type { Completion, CompleteRequest, LlmClient } from '#llm';
import type { RunningTurn } from './turn.types.js';

/**
 * Streams one model call, forwarding text deltas and announced retries as turn events. The turn's signal (cancel,
 * deadline, shutdown, lost lease) aborts the HTTP request and any retry not yet made, and this returns only once
 * the request has ended, so no model call outlives its turn (or its concurrency slot). Undefined when stopped.
 */
export async function streamCompletion(
  llm: LlmClient,
  req: CompleteRequest,
  t: RunningTurn,
): Promise<Completion | undefined> {
  if (t.signal.aborted) return undefined;
  for await (const event of llm.stream(req, { signal: t.signal })) {
    if (event.type === 'text_delta') t.emit({ type: 'text_delta', text: event.text });
    else if (event.type === 'retry') {
      t.emit({
        type: 'retrying',
        attempt: event.attempt,
        max_attempts: event.maxAttempts,
        delay_ms: event.delayMs,
        error: event.error,
      });
    } else if (event.type === 'message_stop') return event.completion;
  }
  if (t.signal.aborted) return undefined;
  throw new Error('the model stream ended without a message');
}
