import { distillByClustering, type DistillItem } from './insight-clustering.js';
import { appendInsights, parseInsights } from './memory-file.js';
import { newInsights } from './distiller.service.js';
import { insightId } from './text-similarity.js';

const item = (text: string, importance = 0.5, at = '2026-01-01T00:00:00.000Z'): DistillItem => ({
  text,
  importance,
  at,
});

describe('distillByClustering', () => {
  it('should turn recurring memories into one insight and drop one-offs', () => {
    const insights = distillByClustering([
      item('User prefers dark mode in the editor', 0.6),
      item('User prefers dark mode in the terminal', 0.5),
      item('Dark mode preferred for the editor', 0.4),
      item('Had pasta for lunch', 0.2),
    ]);
    expect(insights).toEqual([{ text: 'User prefers dark mode in the editor', importance: 0.6, support: 3 }]);
  });

  it('should keep an important single memory and rank by importance and recurrence', () => {
    const insights = distillByClustering([
      item('Deadline for the launch is March 15', 0.85),
      item('Uses vim keybindings', 0.5),
      item('Uses vim keybindings everywhere', 0.5),
      item('Uses vim keybindings in the IDE', 0.5),
    ]);
    expect(insights.map((i) => i.support)).toEqual([3, 1]);
  });
});

describe('newInsights', () => {
  it('should drop candidates MEMORY.md already holds, by id or by wording, and duplicates among themselves', () => {
    const file = appendInsights('# MEMORY.md\n', [{ text: 'User prefers dark mode', support: 2 }]);
    const known = parseInsights(file);
    expect(known).toEqual([{ id: insightId('User prefers dark mode'), text: 'User prefers dark mode (seen 2 times)' }]);
    const fresh = newInsights(
      [
        { text: 'user prefers dark mode.', importance: 0.5, support: 1 },
        { text: 'Deploys happen on Fridays', importance: 0.5, support: 1 },
        { text: 'Deploys happen on Fridays!', importance: 0.5, support: 1 },
      ],
      known,
    );
    expect(fresh.map((f) => f.text)).toEqual(['Deploys happen on Fridays']);
  });

  it('should append under the existing insights section', () => {
    const once = appendInsights('# MEMORY.md\n', [{ text: 'A fact' }]);
    const twice = appendInsights(once, [{ text: 'Another fact' }]);
    expect(parseInsights(twice).map((i) => i.text)).toEqual(['A fact', 'Another fact']);
    expect(twice.match(/## Insights/g)).toHaveLength(1);
  });
});
