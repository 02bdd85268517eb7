import { event } from '#contracts';
import { z } from 'zod';
import { sanitizeStreamName, streamSubjectFor, subjectMatches } from './subject.js';

describe(subjectMatches.name, () => {
  it.each([
    ['alfred.memory.created.v1.m1', 'alfred.memory.created.v1.m1', true],
    ['alfred.memory.*.v1.m1', 'alfred.memory.updated.v1.m1', true],
    ['alfred.memory.*.v1.m1', 'alfred.memory.updated.v1.m2', false],
    ['alfred.memory.>', 'alfred.memory.created.v1.m1', true],
    ['alfred.memory.>', 'alfred.memory', false],
    ['>', 'a', true],
    ['*', 'a.b', false],
    ['a.*', 'a', false],
    ['a.b', 'a.b.c', false],
    ['a.*.c', 'a.x.c', true],
  ])('should match filter %s against %s as %s', (filter, subject, expected) => {
    expect(subjectMatches(filter, subject)).toBe(expected);
  });
});

describe(streamSubjectFor.name, () => {
  it('should cover every past tense of the entity and every key', () => {
    expect(streamSubjectFor(event('memory', 'created', 'S', z.object({})))).toBe('alfred.memory.*.v1.>');
  });
});

describe(sanitizeStreamName.name, () => {
  it('should replace dots and wildcards', () => {
    expect(sanitizeStreamName('t-abc.ALFRED_MEMORY*>')).toBe('t-abc_ALFRED_MEMORY__');
  });
});
