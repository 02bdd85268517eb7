import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { TextBlock, ToolUseBlock } from '#contracts';
import type { Completion, LlmStreamEvent } from './llm.types.js';

/** A push/pull queue bridging the SDK's event emitter to an async iterator. */
class EventQueue<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: () => void } | undefined;
  private closed = false;
  private failure: unknown;

  push(item: T): void {
    this.items.push(item);
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.failure ??= err;
    this.close();
  }

  async next(): Promise<IteratorResult<T>> {
    while (this.items.length === 0 && !this.closed) {
      await new Promise<void>((resolve) => (this.waiter = { resolve }));
    }
    if (this.items.length > 0) return { value: this.items.shift()!, done: false };
    if (this.failure !== undefined) throw this.failure;
    return { value: undefined, done: true };
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve();
  }
}

/** Keeps the text and tool_use blocks of a model message, in the sessions' block shape. */
export function toCompletion(message: Message): Completion {
  const content = message.content.flatMap((b): Array<TextBlock | ToolUseBlock> => {
    if (b.type === 'text') return [{ type: 'text' as const, text: b.text }];
    if (b.type === 'tool_use')
      return [{ type: 'tool_use' as const, id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> }];
    return [];
  });
  const toolUses = content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  return {
    id: message.id,
    model: message.model,
    content,
    text: content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
    toolUses,
    stopReason: message.stop_reason,
    usage: {
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
      cacheCreationInputTokens: message.usage.cache_creation_input_tokens ?? 0,
      cacheReadInputTokens: message.usage.cache_read_input_tokens ?? 0,
    },
  };
}

/**
 * Normalised events from the SDK's MessageStream helper: the SDK reassembles tool input from its
 * input_json_delta chunks, and a tool_use event carries the complete input once its block stops.
 */
export async function* normaliseStream(
  stream: MessageStream,
  mapError: (err: unknown) => unknown,
): AsyncGenerator<LlmStreamEvent> {
  const queue = new EventQueue<LlmStreamEvent>();
  stream.on('streamEvent', (event, snapshot) => {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      queue.push({
        type: 'tool_use_start',
        index: event.index,
        id: event.content_block.id,
        name: event.content_block.name,
      });
    } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      queue.push({ type: 'text_delta', text: event.delta.text });
    } else if (event.type === 'content_block_stop') {
      const block = snapshot.content[event.index];
      if (block?.type === 'tool_use') {
        const input = (block.input ?? {}) as Record<string, unknown>;
        queue.push({
          type: 'tool_use',
          index: event.index,
          block: { type: 'tool_use', id: block.id, name: block.name, input },
        });
      }
    }
  });
  stream.on('finalMessage', (message) => queue.push({ type: 'message_stop', completion: toCompletion(message) }));
  stream.on('error', (err) => queue.fail(mapError(err)));
  stream.on('abort', () => queue.close());
  stream.on('end', () => queue.close());
  try {
    for (;;) {
      const next = await queue.next();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    if (!stream.ended) stream.abort();
  }
}
