import { z } from 'zod';
import { parseModelJson, type LlmClient } from '#llm';
import type { DistillItem, Insight } from './insight-clustering.js';

/** The stable (cached) part of the prompt. */
export const DISTILL_SYSTEM = [
  "You distill an AI agent's notes (memories and what its user said in sessions) into durable insights for " +
    'its MEMORY.md.',
  'An insight is a lasting pattern, preference, decision or fact worth knowing in every future session, in ' +
    'one clear sentence.',
  'Prefer what recurs or is marked important; skip one-off details, small talk and anything already listed as known.',
  'Never invent anything that the notes do not support.',
  'Answer with one JSON object and nothing else: {"insights": [{"text": "<sentence>", "importance": <0..1>, ' +
    '"support": <how many notes support it>}]}',
  'Return at most 10 insights; an empty list is a valid answer.',
].join('\n');

const ModelInsights = z.object({
  insights: z
    .array(
      z.object({
        text: z.string().trim().min(1).max(1000),
        importance: z.number().min(0).max(1),
        support: z.number().int().min(1).default(1),
      }),
    )
    .max(20),
});

/** Insights written by Claude; malformed output is a MODEL_ERROR (the job is retried, then fails with the reason). */
export async function distillWithModel(
  llm: LlmClient,
  items: readonly DistillItem[],
  known: readonly string[],
  focus?: string,
): Promise<Insight[]> {
  const notes = items
    .map(
      (i, n) =>
        `${n + 1}. [importance ${i.importance.toFixed(2)}, ${i.at.slice(0, 10)}] ${i.text.replace(/\s+/g, ' ')}`,
    )
    .join('\n');
  const completion = await llm.complete({
    system: { stable: [DISTILL_SYSTEM], volatile: focus ? `Focus on: ${focus}` : undefined },
    messages: [
      {
        role: 'user',
        content:
          `<known_insights>\n${known.join('\n')}\n</known_insights>\n` +
          `<notes>\n${notes}\n</notes>\n\nReturn the JSON insights.`,
      },
    ],
    maxTokens: 4096,
    temperature: 0,
  });
  return parseModelJson(ModelInsights, completion.text, 'insights').insights;
}
