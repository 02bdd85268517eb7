import { z } from 'zod';

/** Messages the sandboxed child may send; everything it sends is untrusted and parsed with these. */
export const ChildMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('result'), json: z.string() }),
  z.object({ type: z.literal('threw'), message: z.string() }),
  // A kept-alive process after its run, from the event loop's next turn (so only once it is idle): `reusable` is false
  // when the run left something behind (a timer, pending I/O) and the process is then not kept.
  z.object({ type: z.literal('idle'), reusable: z.boolean() }),
  // Before a write that grows the skill's data: room asked of the tenant's disk quota, answered with `reserve-reply`
  // (negative after a write that shrank a file: room given back).
  z.object({ type: z.literal('reserve'), id: z.int().positive(), bytes: z.int().refine((n) => n !== 0) }),
  z.object({
    type: z.literal('fetch'),
    id: z.int().positive(),
    request: z.object({
      url: z.string().max(8192),
      method: z.string().regex(/^[A-Za-z]{1,16}$/),
      headers: z.record(z.string(), z.string()),
      body: z.base64().optional(),
    }),
  }),
]);
export type ChildMessage = z.infer<typeof ChildMessage>;

/** How a sandboxed run ended, before it is turned into a skill result. */
export type SandboxEnd =
  | { kind: 'result'; json: string }
  | { kind: 'threw'; message: string }
  | { kind: 'timed_out' }
  | { kind: 'out_of_memory' }
  | { kind: 'output_limit' }
  | { kind: 'crashed'; reason: string };

/** Caps applied to every run; the defaults suit agent tool calls. */
export interface SandboxLimits {
  /** Kept per stream (stdout, stderr, log) in the record; the rest is cut with a marker. */
  outputBytes: number;
  /** Total output after which the child is killed. */
  outputHardCapBytes: number;
  resultBytes: number;
  fileBytes: number;
  /** RSS allowed above memoryMb for V8's young generation, code and Node itself (buffers count too). */
  rssHeadroomMb: number;
  fetchesPerRun: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  outputBytes: 64 * 1024,
  outputHardCapBytes: 1024 * 1024,
  resultBytes: 1024 * 1024,
  fileBytes: 16 * 1024 * 1024,
  rssHeadroomMb: 96,
  fetchesPerRun: 64,
};
