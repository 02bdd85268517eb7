import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { detectInjection, scanSecrets } from '#content-safety';
import type { BenchRow } from './load.js';

interface InjectionSet {
  readonly benign: readonly string[];
  readonly hostile: ReadonlyArray<{ family: string; text: string }>;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The memory injection detector on the held-out set in bench/data/injection-set.json: precision and recall
 * over all hostile memories and recall per family, plus the benign memories it flagged (the aim is none).
 * Also the cost of the write-time checks per memory, beside a same-run baseline (the set's texts copied).
 */
export async function injectionBench(): Promise<BenchRow[]> {
  // From dist/bench (npm run bench) or from the sources.
  const file = [
    new URL('../../bench/data/injection-set.json', import.meta.url),
    new URL('./data/injection-set.json', import.meta.url),
  ].find((u) => existsSync(u))!;
  const set = JSON.parse(await readFile(file, 'utf8')) as InjectionSet;
  const flagged = (t: string) => detectInjection(t).length > 0;
  const falsePositives = set.benign.filter(flagged);
  const caught = set.hostile.filter((h) => flagged(h.text));
  const tp = caught.length;
  const fp = falsePositives.length;
  const fn = set.hostile.length - tp;
  const families = [...new Set(set.hostile.map((h) => h.family))];
  const perFamily = Object.fromEntries(
    families.map((f) => {
      const all = set.hostile.filter((h) => h.family === f);
      return [`recall_${f}`, round(all.filter((h) => flagged(h.text)).length / all.length)];
    }),
  );
  const missed = set.hostile.filter((h) => !flagged(h.text)).map((h) => h.text.slice(0, 60));
  const texts = [...set.benign, ...set.hostile.map((h) => h.text)];
  const time = async (fn: (t: string) => unknown) => {
    const started = performance.now();
    for (let r = 0; r < 5; r++) for (const t of texts) await fn(t);
    return (performance.now() - started) / (5 * texts.length);
  };
  const baseline = await time((t) => t.slice());
  const injectionMs = await time(detectInjection);
  const secretsMs = await time(scanSecrets);
  return [
    {
      section: 'injection',
      name: `detector on ${set.benign.length} benign + ${set.hostile.length} hostile memories`,
      mode: 'in-process',
      connections: 0,
      rps: 0,
      p50: 0,
      p99: 0,
      errors: 0,
      note:
        fp === 0
          ? 'no benign memory flagged'
          : `benign flagged: ${falsePositives.map((t) => t.slice(0, 50)).join(' | ')}`,
      metrics: {
        precision: round(tp / Math.max(1, tp + fp)),
        recall: round(tp / Math.max(1, tp + fn)),
        false_positives: fp,
        missed: missed.length,
        ...perFamily,
        ms_per_memory_injection_check: round(injectionMs),
        ms_per_memory_secret_scan: round(secretsMs),
        ms_per_memory_baseline_copy: round(baseline),
      },
    },
    ...missed.map((text) => ({
      section: 'injection',
      name: 'missed',
      mode: 'in-process',
      connections: 0,
      rps: 0,
      p50: 0,
      p99: 0,
      errors: 0,
      note: text,
    })),
  ];
}
