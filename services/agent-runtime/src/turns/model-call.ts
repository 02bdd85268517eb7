import type { Completion, CompleteRequest, LlmClient } from '#llm';
import type { RunningTurn } from './turn.types.js';

/**
 * Streams one model call, forwarding text deltas as turn events. Returns undefined when the turn is stopped
 * meanwhile (leaving the loop closes the SDK stream, which aborts the HTTP request).
 */
export async function streamCompletion(llm: LlmClient, req: CompleteRequest, t: RunningTurn): Promise<Completion | undefined> {
  if (t.signal.aborted) return undefined;
  const events = llm.stream(req)[Symbol.asyncIterator]();
  let onAbort!: () => void;
  const aborted = new Promise<'aborted'>((resolve) => (onAbort = () => resolve('aborted')));
  t.signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const next = await Promise.race([events.next(), aborted]);
      if (next === 'aborted') return undefined;
      if (next.done) throw new Error('the model stream ended without a message');
      const event = next.value;
      if (event.type === 'text_delta') t.emit({ type: 'text_delta', text: event.text });
      if (event.type === 'message_stop') return event.completion;
    }
  } finally {
    t.signal.removeEventListener('abort', onAbort);
    void events.return?.(undefined);
  }
}
