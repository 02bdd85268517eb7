import { allows, enforcePolicy, matchesPattern, permits } from './agent-policy.js';

describe('agent policy', () => {
  describe(matchesPattern.name, () => {
    it('should treat * and ? as wildcards and everything else literally', () => {
      expect(matchesPattern('skill_*', 'skill_weather')).toBe(true);
      expect(matchesPattern('skill_*', 'load_skill')).toBe(false);
      expect(matchesPattern('re?all', 'recall')).toBe(true);
      expect(matchesPattern('a.b', 'axb')).toBe(false);
      expect(matchesPattern('*', '')).toBe(true);
    });
  });

  describe(permits.name, () => {
    it('should permit what an allow pattern matches unless a deny pattern does', () => {
      const p = { allow: ['skill_*', 'recall'], deny: ['skill_delete'] };
      expect(permits(p, 'skill_weather')).toBe(true);
      expect(permits(p, 'skill_delete')).toBe(false);
      expect(permits(p, 'recall')).toBe(true);
      expect(permits(p, 'remember')).toBe(false);
      expect(permits(undefined, 'anything')).toBe(true);
      expect(permits({ allow: ['*'], deny: ['*'] }, 'x')).toBe(false);
    });
  });

  describe(allows.name, () => {
    it('should rule on skills by the skills patterns and on every tool, core ones too, by the tools patterns', () => {
      const policy = {
        skills: { allow: ['*'], deny: ['remember'] },
        tools: { allow: ['*'], deny: ['bash', 'skill_x*'] },
      };
      expect(allows(policy, 'skill', 'remember')).toBe(false);
      expect(allows(policy, 'skill', 'bash')).toBe(true);
      expect(allows(policy, 'tool', 'bash')).toBe(false);
      expect(allows(policy, 'tool', 'read')).toBe(true);
      expect(allows(policy, 'tool', 'skill_xray')).toBe(false);
      expect(allows(undefined, 'tool', 'bash')).toBe(true);
    });
  });

  describe(enforcePolicy.name, () => {
    it('should refuse with FORBIDDEN naming the agent, the kind and the name', () => {
      expect(() => enforcePolicy({ tools: { allow: ['*'], deny: ['bash'] } }, 'scout', 'tool', 'bash')).toThrow(
        expect.objectContaining({
          code: 'FORBIDDEN',
          message: 'agent scout\'s policy does not permit the tool "bash"',
          details: { tool: 'bash', agent: 'scout', reason: 'policy' },
        }),
      );
      expect(() => enforcePolicy({ tools: { allow: ['*'], deny: ['bash'] } }, 'scout', 'tool', 'read')).not.toThrow();
    });
  });
});
