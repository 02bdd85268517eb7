import type { Checkpoint, SessionMessage } from '#contracts';
import { checkpointNote, messagesDigest, resumeMessages } from './resume-messages.js';

const checkpoint: Checkpoint = {
  id: 'c1',
  name: 'port',
  summary: 'Parser ported',
  done: ['parser'],
  next: ['config loader'],
  tags: [],
  session: null,
  created_at: '2026-01-01T00:00:00.000Z',
};
const toolCall: SessionMessage = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { cmd: 'ls' } }],
};
const toolResult: SessionMessage = {
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.ts' }],
};
const saved: SessionMessage[] = [
  { role: 'user', content: 'start' },
  toolCall,
  toolResult,
  { role: 'assistant', content: 'listed' },
  { role: 'user', content: 'go on' },
  { role: 'assistant', content: 'done' },
];

describe(resumeMessages.name, () => {
  it('should seed the summary level with the note alone', () => {
    expect(resumeMessages(checkpoint, 'summary', saved, 3)).toEqual([checkpointNote(checkpoint)]);
  });

  it('should put every saved message before the note at the full level', () => {
    expect(resumeMessages(checkpoint, 'full', saved, 3)).toEqual([...saved, checkpointNote(checkpoint)]);
  });

  it('should cut the context forward so it never opens with an orphan tool result', () => {
    const out = resumeMessages(checkpoint, 'context', saved, 5);
    expect(out).toEqual([saved[4], saved[5], checkpointNote(checkpoint)]);
  });

  it('should write the summary, done and next items into the note', () => {
    expect(checkpointNote(checkpoint).content).toBe(
      'Resuming from checkpoint "port" (saved 2026-01-01T00:00:00.000Z).\n\nSummary:\nParser ' +
        'ported\n\nDone:\n- parser\n\nNext:\n- config loader',
    );
  });
});

describe(messagesDigest.name, () => {
  it('should change when any saved message changes', () => {
    expect(messagesDigest(saved)).toMatch(/^[0-9a-f]{64}$/);
    expect(messagesDigest(saved)).not.toBe(
      messagesDigest([...saved.slice(0, 5), { role: 'assistant', content: 'Done' }]),
    );
  });
});
