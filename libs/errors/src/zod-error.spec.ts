import { MemoryCreateBody } from '#contracts';
import { z } from 'zod';
import { zodToAlfredError } from './zod-error.js';

const errorOf = (schema: z.ZodType, value: unknown) => zodToAlfredError(schema.safeParse(value).error!);

describe(zodToAlfredError.name, () => {
  it('should name a custom alfredCode issue with its code', () => {
    const err = errorOf(MemoryCreateBody, { content: '   ' });
    expect([err.code, err.message]).toEqual(['INVALID_CONTENT', 'content: Content cannot be empty']);
  });

  it('should make an out-of-range number VALIDATION_FAILED', () => {
    const err = errorOf(MemoryCreateBody, { content: 'x', importance: 2 });
    expect([err.code, err.status]).toEqual(['VALIDATION_FAILED', 422]);
    expect(err.message).toBe('importance: importance must be between 0.0 and 1.0');
  });

  it('should make other issues BAD_REQUEST and list every issue in details', () => {
    const err = errorOf(MemoryCreateBody, { content: 1, extra: true });
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.details).toEqual({
      issues: [
        expect.objectContaining({ path: 'content', code: 'invalid_type' }),
        expect.objectContaining({ path: '', code: 'unrecognized_keys' }),
      ],
    });
  });

  it('should prefer the most specific code when issues mix', () => {
    expect(errorOf(MemoryCreateBody, { content: ' ', importance: 2, tags: 'x' }).code).toBe('INVALID_CONTENT');
    expect(errorOf(MemoryCreateBody, { content: 'x', importance: 2, tags: 'x' }).code).toBe('VALIDATION_FAILED');
  });
});
