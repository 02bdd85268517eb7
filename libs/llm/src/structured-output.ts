import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { z } from 'zod';

/** The JSON object in a model's text: the whole text, a ```json fence, or the outermost braces. */
function extractJson(text: string): unknown {
  const fenced = text.match(/```(?:json)?\s*([\s\S]*?)```/);
  const candidates = [text.trim(), fenced?.[1]?.trim(), text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const c of candidates) {
    if (!c) continue;
    try {
      return JSON.parse(c);
    } catch {
      // try the next shape
    }
  }
  return undefined;
}

/**
 * Parses a model's structured answer with a schema; anything else is MODEL_ERROR naming what was wrong,
 * so malformed model output never reaches a store.
 */
export function parseModelJson<S extends z.ZodType>(schema: S, text: string, what: string): z.output<S> {
  const json = extractJson(text);
  if (json === undefined) {
    throw new AlfredError(ErrorCode.ModelError, `The model's ${what} was not JSON`, { excerpt: text.slice(0, 200) });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new AlfredError(ErrorCode.ModelError, `The model's ${what} did not fit the expected shape: ${issues[0]}`, {
      issues,
    });
  }
  return parsed.data;
}
