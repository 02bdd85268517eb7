import type { SessionMessage } from '#contracts';
import { allowedCuts, planCompaction, SKILL_TOOL } from './compaction-plan.js';
import { extractiveSummary } from './extractive-summarizer.js';

const user = (text: string): SessionMessage => ({ role: 'user', content: text });
const assistant = (text: string): SessionMessage => ({ role: 'assistant', content: text });
const call = (id: string, name = 'bash'): SessionMessage => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: {} }] });
const result = (id: string, text = 'ok'): SessionMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] });

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
    const msgs = [user('1'), call('s1', SKILL_TOOL), result('s1', '# Skill body'), assistant('2'), user('3'), assistant('4')];
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
    const msgs = Array.from({ length: 60 }, (_, i) => user(i === 55 ? 'The database password rotates monthly.' : `filler line ${i}.`));
    expect(extractiveSummary(msgs, 'keep everything about the database')).toContain('database password');
  });
});
