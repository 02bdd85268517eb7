import { z } from 'zod';

export const FEEDBACK_NOTE_MAX = 2_000;

/** POST /memories/{id}/feedback and /remediations/{id}/feedback body. */
export const FeedbackBody = z.strictObject({
  helpful: z.boolean({ error: 'helpful must be true or false' }),
  note: z.string().trim().min(1, 'note cannot be empty').max(FEEDBACK_NOTE_MAX).optional(),
});
export type FeedbackBody = z.infer<typeof FeedbackBody>;

/** How often a memory or remediation was reported helpful or not; it nudges search ranking. */
export const FeedbackCounts = z.object({
  helpful: z.number().int().min(0),
  unhelpful: z.number().int().min(0),
});
export type FeedbackCounts = z.infer<typeof FeedbackCounts>;

/** The answer to a feedback request: the new counts. */
export const FeedbackResult = z.object({
  id: z.string(),
  feedback: FeedbackCounts,
  timestamp: z.string(),
});
export type FeedbackResult = z.infer<typeof FeedbackResult>;
