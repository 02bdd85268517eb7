import { useEffect, useRef } from 'react';
import { Json, LongText, ScrollText } from '../ui';

/** What a transcript shows, in order: from a live turn's events or from a stored session's messages. */
export type Item =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | {
      kind: 'tool';
      id: string;
      name: string;
      input: unknown;
      result?: { content: string; is_error: boolean };
      unfinished?: string;
    }
  | {
      kind: 'confirm';
      request_id: string;
      prompt: string;
      skill: string;
      action: string;
      answer?: 'approved' | 'declined';
      closed?: string;
    }
  | { kind: 'status'; text: string };

type Block = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};

/** A stored session's messages as transcript items: text, and each tool call with the result that answered it. */
export function itemsOfMessages(messages: ReadonlyArray<{ role: string; content: string | Block[] }>): Item[] {
  const items: Item[] = [];
  const calls = new Map<string, Extract<Item, { kind: 'tool' }>>();
  for (const m of messages) {
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    for (const b of blocks) {
      if (b.type === 'text' && b.text) items.push({ kind: m.role === 'user' ? 'user' : 'assistant', text: b.text });
      else if (b.type === 'tool_use') {
        const call: Extract<Item, { kind: 'tool' }> = {
          kind: 'tool',
          id: b.id ?? '',
          name: b.name ?? '',
          input: b.input,
        };
        calls.set(call.id, call);
        items.push(call);
      } else if (b.type === 'tool_result') {
        const call = calls.get(b.tool_use_id ?? '');
        if (call) call.result = { content: resultText(b.content), is_error: b.is_error === true };
      }
    }
  }
  for (const c of calls.values()) if (!c.result) c.unfinished = 'no result was recorded';
  return items;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b as Block).text ?? '').join('\n');
  return '';
}

/**
 * The transcript. A confirmation that is still open takes focus when it appears (its buttons are one Tab away);
 * once answered, or closed because its turn ended, its buttons are gone and it says why.
 */
export function Transcript({
  items,
  label,
  onAnswer,
}: {
  items: Item[];
  label: string;
  onAnswer?: (requestId: string, approve: boolean) => void;
}) {
  return (
    <ol className="transcript" aria-label={label}>
      {items.map((it, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a transcript only grows at its end, so a place is an identity
        <li key={i} className={`item ${it.kind}`}>
          {it.kind === 'user' && (
            <div>
              <strong>You:</strong> <LongText text={it.text} className="said" />
            </div>
          )}
          {it.kind === 'assistant' && (
            <div data-testid="assistant-text">
              <strong>Agent:</strong> <LongText text={it.text} limit={4000} className="said" />
            </div>
          )}
          {it.kind === 'tool' && <ToolCall item={it} />}
          {it.kind === 'confirm' && <Confirmation item={it} onAnswer={onAnswer} />}
          {it.kind === 'status' && (
            <p role="status" className="meta">
              {it.text}
            </p>
          )}
        </li>
      ))}
    </ol>
  );
}

function ToolCall({ item: it }: { item: Extract<Item, { kind: 'tool' }> }) {
  const state = it.result
    ? it.result.is_error
      ? '— failed'
      : '— done'
    : it.unfinished
      ? `— not finished: ${it.unfinished}`
      : '— running…';
  return (
    <article className="tool" aria-label={`Tool call ${it.name}`}>
      <p>
        <strong>Tool call</strong> <code>{it.name}</code> {state}
      </p>
      <Json value={it.input} label={`Input of ${it.name}`} />
      {it.result && (
        <ScrollText className={it.result.is_error ? 'json bad' : 'json'} label={`Result of ${it.name}`}>
          {it.result.content}
        </ScrollText>
      )}
    </article>
  );
}

function Confirmation({
  item: it,
  onAnswer,
}: {
  item: Extract<Item, { kind: 'confirm' }>;
  onAnswer?: (requestId: string, approve: boolean) => void;
}) {
  const group = useRef<HTMLFieldSetElement>(null);
  const open = !it.answer && !it.closed && onAnswer !== undefined;
  // Only when it appears: focus is not pulled back later.
  // biome-ignore lint/correctness/useExhaustiveDependencies: on mount only, whatever open becomes later
  useEffect(() => {
    if (open) group.current?.focus();
  }, []);
  const promptId = `prompt-${it.request_id}`;
  return (
    <fieldset
      aria-label="Confirmation request"
      aria-describedby={promptId}
      className="confirm"
      tabIndex={-1}
      ref={group}
    >
      <p id={promptId}>
        <strong>Confirmation needed</strong> ({it.action}, {it.skill}): {it.prompt}
      </p>
      {it.answer && <p role="status">You {it.answer} this.</p>}
      {!it.answer && (
        <>
          <button
            type="button"
            disabled={!open}
            onClick={() => onAnswer!(it.request_id, true)}
            aria-describedby={it.closed ? `${promptId}-closed` : undefined}
          >
            Approve
          </button>
          <button
            type="button"
            className="danger"
            disabled={!open}
            onClick={() => onAnswer!(it.request_id, false)}
            aria-describedby={it.closed ? `${promptId}-closed` : undefined}
          >
            Decline
          </button>
          {it.closed && (
            <p className="meta closed" id={`${promptId}-closed`}>
              Not answered: {it.closed}
            </p>
          )}
        </>
      )}
    </fieldset>
  );
}
