import { buildSystemPrompt } from './system-prompt.builder.js';

describe(buildSystemPrompt.name, () => {
  const agent = { name: 'jarvis', persona: 'Formal.', policy: { skills: { allow: ['*'], deny: [] }, tools: { allow: ['*'], deny: [] } }, default: false, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' };
  const env = { now: new Date('2026-11-22T10:00:00Z'), workingDirectory: '/ws/jarvis', apiUrl: 'http://127.0.0.1:8080', sessionId: 's1' };

  it('should order persona+SOUL, USER, MEMORY+memories, skill index, active skill as the stable part and put the environment last', () => {
    const prompt = buildSystemPrompt(
      { agent, soul: 'Be calm.', user: 'Likes tea.', memoryFile: 'Insight A.', memories: [{ content: 'User lives in Oslo', importance: 0.8 }], skillIndex: '## Available skills\n- remember', activeSkill: '<skill name="recall">' },
      env,
    );
    const joined = prompt.stable.join('\n');
    const order = ['You are jarvis', 'Formal.', 'Be calm.', 'Likes tea.', 'Insight A.', 'User lives in Oslo', '## Available skills', '## Active skill'].map((s) => joined.indexOf(s));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(prompt.volatile).toMatch(/Time: 2026-11-22T10:00:00.000Z[\s\S]*Working directory: \/ws\/jarvis[\s\S]*Alfred API: http:\/\/127.0.0.1:8080/);
    expect(joined).not.toContain('2026-11-22');
  });

  it('should leave out empty sections', () => {
    const prompt = buildSystemPrompt({ agent: { ...agent, persona: '' }, soul: '', user: ' ', memoryFile: '', memories: [], skillIndex: '' }, env);
    expect(prompt.stable).toHaveLength(1);
    expect(prompt.stable[0]).not.toContain('## Persona');
  });
});
