import type { SessionMessage } from '#contracts';
import { allowedCuts, planByTokens, planCompaction, SKILL_TOOL } from './compaction-plan.js';
import { renderTranscript } from './transcript.js';
import { extractiveSummary } from './extractive-summarizer.js';

const user = (text: string): SessionMessage => ({ role: 'user', content: text });
const assistant = (text: string): SessionMessage => ({ role: 'assistant', content: text });
const call = (id: string, name = 'bash'): SessionMessage => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name, input: {} }],
});
const result = (id: string, text = 'ok'): SessionMessage => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: text }],
});

describe('planCompaction', () => {
  it('should return null when the session is not longer than what is kept', () => {
    expect(planCompaction([user('a'), assistant('b')], 2)).toBeNull();
    expect(planCompaction([], 0)).toBeNull();
  });

  it('should keep the last n messages and summarise the rest', () => {
    const msgs = [user('1'), assistant('2'), user('3'), assistant('4')];
    const plan = planCompaction(msgs, 2)!;
    expect(plan.summarised).toEqual(msgs.slice(0, 2));
    expect(plan.recent).toEqual(msgs.slice(2));
  });

  it('should move the cut back so a tool call stays with its result', () => {
    const msgs = [user('1'), assistant('2'), call('t1'), result('t1'), assistant('done')];
    const plan = planCompaction(msgs, 2)!;
    expect(plan.recent).toEqual(msgs.slice(2));
    expect(plan.summarised).toEqual(msgs.slice(0, 2));
  });

  it('should keep skill loads verbatim, out of the summary', () => {
    const msgs = [
      user('1'),
      call('s1', SKILL_TOOL),
      result('s1', '# Skill body'),
      assistant('2'),
      user('3'),
      assistant('4'),
    ];
    const plan = planCompaction(msgs, 1)!;
    expect(plan.skillMessages).toEqual([msgs[1], msgs[2]]);
    expect(plan.summarised).toEqual([msgs[0], msgs[3], msgs[4]]);
  });

  it('should return null when only skill loads are older than the recent messages', () => {
    expect(planCompaction([call('s1', SKILL_TOOL), result('s1'), user('x')], 1)).toBeNull();
  });
});

describe('allowedCuts', () => {
  it('should forbid every cut between a tool_use and a later result, across messages', () => {
    expect(allowedCuts([call('a'), user('interleaved'), result('a')])).toEqual([true, false, false, true]);
  });
});

describe('extractiveSummary', () => {
  it('should say it is extractive and keep leading sentences', () => {
    const s = extractiveSummary([user('Deploy on Friday. Extra detail here.'), assistant('Sure.')]);
    expect(s).toMatch(/extractive: no language model is configured/);
    expect(s).toContain('- user: Deploy on Friday.');
    expect(s).not.toContain('Extra detail');
  });

  it('should prefer lines matching the instructions when over budget', () => {
    const msgs = Array.from({ length: 60 }, (_, i) =>
      user(i === 55 ? 'The database password rotates monthly.' : `filler line ${i}.`),
    );
    expect(extractiveSummary(msgs, 'keep everything about the database')).toContain('database password');
  });
});

describe('planByTokens', () => {
  const size = (m: SessionMessage[]) =>
    m.reduce((n, x) => n + (typeof x.content === 'string' ? x.content.length : 10), 0);

  it('should keep the longest recent tail within the budget, however few messages that is', () => {
    const msgs = [user('a'.repeat(500)), assistant('b'.repeat(500)), user('c'.repeat(500)), assistant('d'.repeat(40))];
    const plan = planByTokens(msgs, 600, size)!;
    expect(plan.recent).toEqual(msgs.slice(2));
    expect(plan.summarised).toEqual(msgs.slice(0, 2));
  });

  it('should fold even the last message but one when each is huge, and keep tool calls with their results', () => {
    const msgs = [user('x'.repeat(5000)), call('t1'), result('t1', 'y'), user('z'.repeat(5000))];
    const plan = planByTokens(msgs, 100, size)!;
    expect(plan.recent).toEqual([]);
    expect(plan.summarised).toEqual(msgs);
    expect(planByTokens([user('only')], 100, size)).toBeNull();
    expect(planByTokens([user('o'.repeat(500))], 100, size)!.summarised).toHaveLength(1);
  });
});

describe('renderTranscript', () => {
  it('should clip each huge block and drop the oldest lines beyond the limit', () => {
    const text = renderTranscript(
      [user('old '.repeat(100)), result('t1', 'r'.repeat(50_000)), user('latest question')],
      4_300,
    );
    expect(text.length).toBeLessThan(4_400);
    expect(text).toContain('characters left out');
    expect(text).toContain('older transcript lines left out');
    expect(text).toContain('latest question');
  });
});
