import { appendObservation, OBSERVATIONS_HEADER } from './agent-file-editor.js';
import { alreadySays } from './observation-match.js';

describe('alreadySays', () => {
  const file = '# USER.md\n\n## Observations\n\n- Prefers TypeScript over JavaScript\n- Works late at night\n';

  it('should find an observation the file contains after normalising', () => {
    expect(alreadySays(file, 'prefers typescript over javascript!')).toMatch(/already contains/);
  });

  it('should find a reworded observation by word coverage', () => {
    expect(alreadySays(file, 'The user is working late at night')).toMatch(/already says/);
  });

  it('should not match a contradicting or new observation', () => {
    expect(alreadySays(file, 'Prefers Python for data work')).toBeNull();
    expect(alreadySays(file, 'Does not work late at weekends on Sundays')).toBeNull();
  });
});

describe('appendObservation', () => {
  it('should create the section when absent', () => {
    expect(appendObservation('# USER.md\n\nIntro.\n', 'Likes tea')).toBe(
      `# USER.md\n\nIntro.\n\n${OBSERVATIONS_HEADER}\n\n- Likes tea\n`,
    );
  });

  it('should append to the existing section, before the next one', () => {
    const out = appendObservation(`# U\n\n${OBSERVATIONS_HEADER}\n\n- One\n\n## Other\n\n- x\n`, 'Two');
    expect(out).toBe(`# U\n\n${OBSERVATIONS_HEADER}\n\n- One\n- Two\n\n## Other\n\n- x\n`);
  });
});
