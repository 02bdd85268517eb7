import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError, enc, headers, query, send } from '../api';
import { SseParser, type SseEvent } from '../sse';
import { ErrorBox, Section, Time, useLoad } from '../ui';
import { itemsOfMessages, Transcript, type Item } from './Transcript';

interface SessionSummary {
  id: string;
  agent: string;
  message_count: number;
  first_message?: string | null;
  updated_at: string;
  created_at: string;
}
type Message = { role: string; content: string | Array<{ type: string }> };

/** Sessions (agent, first message, time) and a chat panel: the stored transcript, then turns over SSE. */
export function ChatView({ agent }: { agent: string }) {
  const sessions = useLoad(
    () => api<{ sessions: SessionSummary[]; total: number }>('GET', `/sessions${query({ agent, limit: 50 })}`),
    [agent],
  );
  const [current, setCurrent] = useState<string>();
  const [error, setError] = useState<unknown>();

  const create = async () => {
    setError(undefined);
    try {
      const s = await api<{ id: string }>('POST', '/sessions', {});
      setCurrent(s.id);
      sessions.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div className="columns">
      <Section title="Sessions">
        <button type="button" onClick={create}>
          New session
        </button>
        <ErrorBox error={error ?? sessions.error} stale={sessions.data !== undefined} />
        {sessions.data && (
          <p className="meta">
            {sessions.data.total} session(s) of {agent}, newest first
          </p>
        )}
        <ul className="picklist sessions" aria-label="Sessions">
          {sessions.data?.sessions.map((s) => (
            <li key={s.id}>
              <button type="button" aria-pressed={s.id === current} onClick={() => setCurrent(s.id)}>
                <span className="first-message">{s.first_message ?? '(no messages yet)'}</span>
                <span className="session-meta">
                  {s.agent} · {s.message_count} message(s) · <Time at={s.updated_at} />
                </span>
              </button>
            </li>
          ))}
        </ul>
      </Section>
      {current ? (
        <ChatPanel key={current} sessionId={current} onTurnEnded={sessions.reload} />
      ) : (
        <Section title="Chat">
          <p>Choose a session to read its transcript, or start a new one.</p>
        </Section>
      )}
    </div>
  );
}

/** Applies one SSE event of a live turn to the transcript items. */
function applyEvent(prev: Item[], e: SseEvent): Item[] {
  const next = [...prev];
  const last = next[next.length - 1];
  switch (e.event) {
    case 'text_delta':
      if (last?.kind === 'assistant') next[next.length - 1] = { ...last, text: last.text + e.data.text };
      else next.push({ kind: 'assistant', text: e.data.text });
      break;
    case 'tool_call':
      next.push({ kind: 'tool', id: e.data.id, name: e.data.name, input: e.data.input });
      break;
    case 'tool_result':
      return next.map((x) =>
        x.kind === 'tool' && x.id === e.data.id
          ? { ...x, result: { content: e.data.content, is_error: e.data.is_error } }
          : x,
      );
    case 'confirmation_request':
      next.push({
        kind: 'confirm',
        request_id: e.data.request_id,
        prompt: e.data.prompt,
        skill: e.data.skill,
        action: e.data.action,
      });
      break;
    case 'retrying':
      next.push({
        kind: 'status',
        text:
          `Model call failed (${e.data.error.message}); retrying, attempt ${e.data.attempt} of ` +
          `${e.data.max_attempts}`,
      });
      break;
    case 'compacted':
      next.push({ kind: 'status', text: `Context compacted: ${e.data.tokens_before} → ${e.data.tokens_after} tokens` });
      break;
    case 'error':
      next.push({ kind: 'status', text: `Error: ${e.data.error.code}: ${e.data.error.message}` });
      break;
    case 'done':
      return [
        ...closeOpen(next, `the turn was ${e.data.status}`),
        { kind: 'status', text: `Turn ${e.data.status} after ${e.data.rounds} round(s)` },
      ];
  }
  return next;
}

/** At a turn's end nothing of it is live any more: open confirmations close and running tool calls stop, saying why. */
function closeOpen(items: Item[], why: string): Item[] {
  return items.map((x) => {
    if (x.kind === 'confirm' && !x.answer && !x.closed) return { ...x, closed: why };
    if (x.kind === 'tool' && !x.result && !x.unfinished) return { ...x, unfinished: why };
    return x;
  });
}

function ChatPanel({ sessionId, onTurnEnded }: { sessionId: string; onTurnEnded: () => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [message, setMessage] = useState('');
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController | undefined>(undefined);
  const past = useLoad(
    () => api<{ messages: Message[]; agent: string; created_at: string }>('GET', `/sessions/${enc(sessionId)}`),
    [sessionId],
  );

  const send$ = async (ev: FormEvent) => {
    ev.preventDefault();
    if (!message.trim() || running) return;
    setError(undefined);
    setItems((prev) => [...prev, { kind: 'user', text: message }]);
    setMessage('');
    setRunning(true);
    abort.current = new AbortController();
    let ended = false;
    try {
      const res = await send(`/sessions/${enc(sessionId)}/turns`, {
        method: 'POST',
        headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
        body: JSON.stringify({ message }),
        signal: abort.current.signal,
      });
      if (!res.ok || !res.body) {
        const body = await res.json().catch(() => undefined);
        throw new Error(body?.error?.message ?? `the turn could not start (${res.status})`);
      }
      const parser = new SseParser();
      const reader = res.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const e of parser.push(value)) {
          if (e.event === 'done') ended = true;
          setItems((prev) => applyEvent(prev, e));
        }
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(err);
    } finally {
      // A stream cut before `done` leaves nothing answerable: the turn's outcome is unknown here.
      if (!ended) setItems((prev) => closeOpen(prev, 'the connection to the turn was lost'));
      setRunning(false);
      onTurnEnded();
    }
  };

  const answer = async (requestId: string, approve: boolean) => {
    setError(undefined);
    try {
      await api('POST', `/sessions/${enc(sessionId)}/confirm`, { request_id: requestId, approve });
      setItems((prev) =>
        prev.map((x) =>
          x.kind === 'confirm' && x.request_id === requestId ? { ...x, answer: approve ? 'approved' : 'declined' } : x,
        ),
      );
    } catch (err) {
      // The server no longer waits for it (the turn ended, or it timed out): say so on the request itself.
      if (err instanceof ApiError && (err.status === 404 || err.status === 409)) {
        setItems((prev) =>
          prev.map((x) => (x.kind === 'confirm' && x.request_id === requestId ? { ...x, closed: err.message } : x)),
        );
      } else setError(err);
    }
  };

  const cancel = async () => {
    setError(undefined);
    try {
      await api('DELETE', `/sessions/${enc(sessionId)}/turns/current`);
    } catch (err) {
      setError(err);
    }
  };

  const earlier = past.data ? itemsOfMessages(past.data.messages) : [];
  return (
    <Section title="Chat">
      <p className="meta">
        Session {sessionId}
        {past.data && (
          <>
            {' '}
            with {past.data.agent}, started <Time at={past.data.created_at} />
          </>
        )}
      </p>
      <ErrorBox error={past.error} stale={past.data !== undefined} />
      {earlier.length > 0 && <Transcript items={earlier} label="Earlier in this session" />}
      <div aria-live="polite">
        <Transcript items={items} label="Transcript" onAnswer={answer} />
      </div>
      <ErrorBox error={error} />
      <form onSubmit={send$} className="row chat-form">
        <label htmlFor="chat-message">Message</label>
        <textarea
          id="chat-message"
          rows={2}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          disabled={running}
        />
        <button type="submit" disabled={running || !message.trim()}>
          Send
        </button>
        <button type="button" onClick={cancel} disabled={!running}>
          Cancel turn
        </button>
      </form>
    </Section>
  );
}
