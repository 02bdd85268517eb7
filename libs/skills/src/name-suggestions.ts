/** Edit distance between two strings (insertions, deletions, substitutions). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[b.length];
}

/** Valid names close to `wanted`: small edit distance, or one is a prefix/part of the other. Closest first. */
export function suggestNames(wanted: string, names: Iterable<string>, limit = 5): string[] {
  const w = wanted.toLowerCase();
  const maxDistance = Math.max(2, Math.floor(w.length / 3));
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const distance = levenshtein(w, name);
    const related = w.length >= 3 && (name.startsWith(w) || w.startsWith(name) || name.includes(w));
    if (distance <= maxDistance || related) scored.push({ name, score: related ? Math.min(distance, 1) : distance });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : 1));
  return scored.slice(0, limit).map((s) => s.name);
}
