import { z } from 'zod';
import type { SessionMessage } from '#contracts';
import { parseModelJson, type LlmClient } from '#llm';
import { renderTranscript, SUMMARY_MARKER } from './transcript.js';

/** The stable (cached) part of the prompt: the same for every compaction. */
export const COMPACT_SYSTEM = [
  'You compact the earlier part of a conversation between a user and an AI agent so the agent can continue it.',
  'Write a faithful, dense summary in the second person ("you") addressed to the agent: what the user wants,',
  'decisions taken, facts learned, files and commands touched, tool results that matter, and open questions.',
  'Never invent anything. Keep identifiers, paths, numbers and names exactly.',
  'Answer with one JSON object and nothing else: {"summary": "<the summary>"}.',
].join('\n');

const ModelSummary = z.object({ summary: z.string().trim().min(1).max(100_000) });

/** A summary written by Claude; malformed output is a MODEL_ERROR, never stored. */
export async function modelSummary(
  llm: LlmClient,
  messages: readonly SessionMessage[],
  instructions?: string,
  targetTokens?: number,
): Promise<string> {
  // Near a small window the summary and what it reads are bounded by the target (about 4 characters per token).
  const maxTokens = targetTokens ? Math.max(256, Math.min(4096, Math.floor(targetTokens / 3))) : 4096;
  const transcript = renderTranscript(messages, targetTokens ? targetTokens * 4 : 400_000);
  const completion = await llm.complete({
    system: {
      stable: [COMPACT_SYSTEM],
      volatile: instructions ? `The user's instructions for this summary: ${instructions}` : undefined,
    },
    messages: [{ role: 'user', content: `<conversation>\n${transcript}\n</conversation>\n\nReturn the JSON summary.` }],
    maxTokens,
    temperature: 0,
  });
  const { summary } = parseModelJson(ModelSummary, completion.text, 'summary');
  return `${SUMMARY_MARKER} of ${messages.length} earlier messages, written by ${completion.model}]\n${summary}`;
}
