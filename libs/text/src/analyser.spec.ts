import { analyse, STOP_WORDS, stem, termFrequencies, words } from './analyser.js';

describe('analyser', () => {
  describe(words.name, () => {
    it('should lower-case, split on non-letters and drop possessives and contraction tails', () => {
      expect(words("Caroline's kids DON'T go; it's 5 o'clock, naïve café")).toEqual([
        'caroline',
        'kids',
        'do',
        'go',
        'it',
        '5',
        'o',
        'clock',
        'naïve',
        'café',
      ]);
      expect(words("I can't and won't")).toEqual(['i', 'can', 'and', 'will']);
    });

    it('should fold typographic apostrophes and compatibility forms', () => {
      expect(words('Melanie’s ﬁle')).toEqual(['melanie', 'file']);
    });
  });

  describe(analyse.name, () => {
    it('should drop stop words and stem what remains', () => {
      expect(analyse('What did Caroline research about the adoption agencies?')).toEqual([
        'carolin',
        'research',
        'adopt',
        'agenc',
      ]);
    });

    it('should make inflections meet', () => {
      expect(analyse('running runs')).toEqual(analyse('run run'));
      expect(analyse('painted paintings')).toEqual(['paint', 'paint']);
    });

    it('should keep numbers and drop extra ignored words', () => {
      expect(analyse('user prefers port 8080', { ignore: new Set(['user']) })).toEqual(['prefer', 'port', '8080']);
    });

    it('should give nothing for a text of stop words only', () => {
      expect(analyse('what is it that they were')).toEqual([]);
      expect([...STOP_WORDS].every((w) => analyse(w).length === 0)).toBe(true);
    });
  });

  describe(termFrequencies.name, () => {
    it('should count repeated terms', () => {
      expect(termFrequencies('camp camping campers camp')).toEqual(
        new Map([
          ['camp', 3],
          ['camper', 1],
        ]),
      );
    });
  });

  describe(stem.name, () => {
    it('should leave numbers alone', () => {
      expect(stem('2023')).toBe('2023');
    });
  });
});
