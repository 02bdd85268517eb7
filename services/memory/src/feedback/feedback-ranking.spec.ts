import { feedbackBalance, rawFloorFor, withFeedback } from './feedback-ranking.js';

describe('feedback ranking', () => {
  describe(feedbackBalance.name, () => {
    it('should be 0 without feedback and with balanced feedback', () => {
      expect(feedbackBalance(undefined)).toBe(0);
      expect(feedbackBalance({ helpful: 0, unhelpful: 0 })).toBe(0);
      expect(feedbackBalance({ helpful: 3, unhelpful: 3 })).toBe(0);
    });

    it('should grow with consistent reports and stay inside (-1, 1)', () => {
      const one = feedbackBalance({ helpful: 1, unhelpful: 0 });
      const many = feedbackBalance({ helpful: 50, unhelpful: 0 });
      expect(one).toBeCloseTo(1 / 3);
      expect(many).toBeGreaterThan(one);
      expect(many).toBeLessThan(1);
      expect(feedbackBalance({ helpful: 0, unhelpful: 50 })).toBeGreaterThan(-1);
    });
  });

  describe(withFeedback.name, () => {
    it('should leave the score unchanged without feedback', () => {
      expect(withFeedback(0.42, undefined)).toBe(0.42);
    });

    it('should lift helpful and lower unhelpful hits, within 0..1', () => {
      expect(withFeedback(0.5, { helpful: 2, unhelpful: 0 })).toBeGreaterThan(0.5);
      expect(withFeedback(0.5, { helpful: 0, unhelpful: 2 })).toBeLessThan(0.5);
      expect(withFeedback(1, { helpful: 1000, unhelpful: 0 })).toBeLessThanOrEqual(1);
      expect(withFeedback(0, { helpful: 0, unhelpful: 1000 })).toBe(0);
    });

    it('should move a score by at most 20% of its room', () => {
      expect(withFeedback(0.5, { helpful: 1e6, unhelpful: 0 })).toBeLessThanOrEqual(0.6);
      expect(withFeedback(0.5, { helpful: 0, unhelpful: 1e6 })).toBeGreaterThanOrEqual(0.4);
    });

    it('should flip two near-equal hits when one is helpful and the other not', () => {
      const a = withFeedback(0.61, { helpful: 0, unhelpful: 2 });
      const b = withFeedback(0.6, { helpful: 2, unhelpful: 0 });
      expect(b).toBeGreaterThan(a);
    });
  });

  describe(rawFloorFor.name, () => {
    it('should be a score that the largest lift brings exactly to min_score', () => {
      const floor = rawFloorFor(0.5);
      expect(withFeedback(floor, { helpful: 1e9, unhelpful: 0 })).toBeCloseTo(0.5, 5);
      expect(rawFloorFor(0.1)).toBe(0);
    });
  });
});
