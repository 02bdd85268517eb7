import { z } from 'zod';
import { AGENT_FILE_MAX, agentFileName } from '#contracts';
import { parseModelJson, type LlmClient } from '#llm';

/** The stable (cached) part of the prompt. */
export const LEARN_SYSTEM = [
  "You maintain an AI agent's markdown file: USER.md (what the agent knows about its user) or SOUL.md (the " +
    "agent's own voice, values and behaviour).",
  'You receive the current file and one new observation. Decide whether the file already says it.',
  'If it does, answer {"status": "no_change", "reason": "<why>"}.',
  'Otherwise integrate the observation with the smallest sensible edit: add it to the fitting section, or ' +
    'reword a line it refines or contradicts.',
  'Keep every other line exactly as it is. Never remove facts the observation does not contradict.',
  'Then answer {"status": "updated", "content": "<the whole new file>", "changes": ["<one short line per change>"]}.',
  'Answer with one JSON object and nothing else.',
].join('\n');

const ModelDecision = z.discriminatedUnion('status', [
  z.object({ status: z.literal('no_change'), reason: z.string().trim().min(1) }),
  z.object({
    status: z.literal('updated'),
    content: z.string().trim().min(1).max(AGENT_FILE_MAX),
    changes: z.array(z.string().trim().min(1)).min(1),
  }),
]);
export type ModelDecision = z.infer<typeof ModelDecision>;

/** Asks Claude how the observation changes the file; malformed output is a MODEL_ERROR, never written. */
export async function modelDecision(
  llm: LlmClient,
  target: 'user' | 'soul',
  content: string,
  observation: string,
): Promise<ModelDecision> {
  const completion = await llm.complete({
    system: { stable: [LEARN_SYSTEM] },
    messages: [
      {
        role: 'user',
        content:
          `<file name="${agentFileName[target]}">\n${content}\n</file>\n` +
          `<observation>${observation}</observation>\n\nReturn the JSON decision.`,
      },
    ],
    maxTokens: 8192,
    temperature: 0,
  });
  const decision = parseModelJson(ModelDecision, completion.text, 'file update');
  return decision.status === 'updated' ? { ...decision, content: `${decision.content}\n` } : decision;
}
