/** The section deterministic learning appends to. */
export const OBSERVATIONS_HEADER = '## Observations';

/** Appends `- observation` under the observations section, creating the section at the end when absent. */
export function appendObservation(content: string, observation: string): string {
  const bullet = `- ${observation.replace(/\s+/g, ' ').trim()}`;
  const lines = content.replace(/\s+$/, '').split('\n');
  const start = lines.findIndex((l) => l.trim() === OBSERVATIONS_HEADER);
  if (start < 0) return `${lines.join('\n')}\n\n${OBSERVATIONS_HEADER}\n\n${bullet}\n`;
  let end = start + 1;
  while (end < lines.length && !/^#{1,2}\s/.test(lines[end]!)) end++;
  let insertAt = end;
  while (insertAt > start + 1 && lines[insertAt - 1]!.trim() === '') insertAt--;
  lines.splice(insertAt, 0, ...(insertAt === start + 1 ? ['', bullet] : [bullet]));
  return `${lines.join('\n')}\n`;
}
