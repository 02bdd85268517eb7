import type { z } from 'zod';
import { zodToAlfredError } from '#errors';

/** Validates HTTP input with a contract schema; a failure becomes the API's error (400/422), nothing runs. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw zodToAlfredError(result.error);
  return result.data;
}
