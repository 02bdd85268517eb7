import { matchesPattern, permits } from './agent-policy.js';

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
});
