import { useRef, useState, type FormEvent } from 'react';
import { api, enc, headers, query } from '../api';
import { SseParser, type SseEvent } from '../sse';
import { ErrorBox, Json, Section, useLoad } from '../ui';

interface SessionSummary {
  id: string;
  agent: string;
  message_count: number;
  updated_at?: string;
  created_at?: string;
}
/** What the transcript shows, in the order the turn's events arrived. */
type Item =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'tool'; id: string; name: string; input: unknown; result?: { content: string; is_error: boolean } }
  | { kind: 'confirm'; request_id: string; prompt: string; skill: string; action: string; answer?: 'approved' | 'declined' }
  | { kind: 'status'; text: string };

/** Sessions and a chat panel that runs turns over SSE: streaming text, tool calls, confirmations, cancel. */
export function ChatView({ agent }: { agent: string }) {
  const sessions = useLoad(() => api<{ sessions: SessionSummary[] }>('GET', `/sessions${query({ agent })}`), [agent]);
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
        <ErrorBox error={error ?? sessions.error} />
        <ul className="picklist" aria-label="Sessions">
          {sessions.data?.sessions.map((s) => (
            <li key={s.id}>
              <button type="button" aria-pressed={s.id === current} onClick={() => setCurrent(s.id)}>
                {s.id.slice(0, 18)}… ({s.message_count} messages)
              </button>
            </li>
          ))}
        </ul>
      </Section>
      {current ? <ChatPanel key={current} sessionId={current} onTurnEnded={sessions.reload} /> : <Section title="Chat"><p>Choose or start a session.</p></Section>}
    </div>
  );
}

function ChatPanel({ sessionId, onTurnEnded }: { sessionId: string; onTurnEnded: () => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [message, setMessage] = useState('');
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>();
  const abort = useRef<AbortController | undefined>(undefined);
  const past = useLoad(() => api<{ messages: { role: string; content: unknown }[] }>('GET', `/sessions/${enc(sessionId)}`), [sessionId]);

  const apply = (e: SseEvent) =>
    setItems((prev) => {
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
        case 'tool_result': {
          const i = next.findIndex((x) => x.kind === 'tool' && x.id === e.data.id);
          if (i >= 0) next[i] = { ...(next[i] as Extract<Item, { kind: 'tool' }>), result: { content: e.data.content, is_error: e.data.is_error } };
          break;
        }
        case 'confirmation_request':
          next.push({ kind: 'confirm', request_id: e.data.request_id, prompt: e.data.prompt, skill: e.data.skill, action: e.data.action });
          break;
        case 'retrying':
          next.push({ kind: 'status', text: `Model call failed (${e.data.error.message}); retrying, attempt ${e.data.attempt} of ${e.data.max_attempts}` });
          break;
        case 'compacted':
          next.push({ kind: 'status', text: `Context compacted: ${e.data.tokens_before} → ${e.data.tokens_after} tokens` });
          break;
        case 'error':
          next.push({ kind: 'status', text: `Error: ${e.data.error.code}: ${e.data.error.message}` });
          break;
        case 'done':
          next.push({ kind: 'status', text: `Turn ${e.data.status} after ${e.data.rounds} round(s)` });
          break;
      }
      return next;
    });

  const send = async (ev: FormEvent) => {
    ev.preventDefault();
    if (!message.trim() || running) return;
    setError(undefined);
    setItems((prev) => [...prev, { kind: 'user', text: message }]);
    setMessage('');
    setRunning(true);
    abort.current = new AbortController();
    try {
      const res = await fetch(`/sessions/${enc(sessionId)}/turns`, {
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
        parser.push(value).forEach(apply);
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(err);
    } finally {
      setRunning(false);
      onTurnEnded();
    }
  };

  const answer = async (requestId: string, approve: boolean) => {
    setError(undefined);
    try {
      await api('POST', `/sessions/${enc(sessionId)}/confirm`, { request_id: requestId, approve });
      setItems((prev) => prev.map((x) => (x.kind === 'confirm' && x.request_id === requestId ? { ...x, answer: approve ? 'approved' : 'declined' } : x)));
    } catch (err) {
      setError(err);
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

  return (
    <Section title="Chat">
      <p className="meta">Session {sessionId}</p>
      {past.data && past.data.messages.length > 0 && (
        <details>
          <summary>Earlier messages ({past.data.messages.length})</summary>
          <Json value={past.data.messages} label="Earlier messages" />
        </details>
      )}
      <ol className="transcript" aria-label="Transcript" aria-live="polite">
        {items.map((it, i) => (
          <li key={i} className={`item ${it.kind}`}>
            {it.kind === 'user' && (
              <p>
                <strong>You:</strong> {it.text}
              </p>
            )}
            {it.kind === 'assistant' && (
              <p data-testid="assistant-text">
                <strong>Agent:</strong> {it.text}
              </p>
            )}
            {it.kind === 'tool' && (
              <div className="tool" aria-label={`Tool call ${it.name}`}>
                <p>
                  <strong>Tool call</strong> <code>{it.name}</code> {it.result ? (it.result.is_error ? '— failed' : '— done') : '— running…'}
                </p>
                <Json value={it.input} label={`Input of ${it.name}`} />
                {it.result && <pre className={it.result.is_error ? 'json bad' : 'json'}>{it.result.content}</pre>}
              </div>
            )}
            {it.kind === 'confirm' && (
              <div role="group" aria-label="Confirmation request" className="confirm">
                <p>
                  <strong>Confirmation needed</strong> ({it.action}, {it.skill}): {it.prompt}
                </p>
                {it.answer ? (
                  <p role="status">You {it.answer} this.</p>
                ) : (
                  <>
                    <button type="button" onClick={() => answer(it.request_id, true)}>
                      Approve
                    </button>
                    <button type="button" className="danger" onClick={() => answer(it.request_id, false)}>
                      Decline
                    </button>
                  </>
                )}
              </div>
            )}
            {it.kind === 'status' && (
              <p role="status" className="meta">
                {it.text}
              </p>
            )}
          </li>
        ))}
      </ol>
      <ErrorBox error={error} />
      <form onSubmit={send} className="row">
        <label htmlFor="chat-message">Message</label>
        <textarea id="chat-message" rows={2} value={message} onChange={(e) => setMessage(e.target.value)} disabled={running} />
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
