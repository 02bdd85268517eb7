import { createHash } from 'node:crypto';

/** Input tokens of one request split as the Messages API reports them with prompt caching. */
export interface CacheUsage {
  readonly input_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
}

// The API looks for an earlier cache entry at most this many blocks before each breakpoint.
const LOOKBACK_BLOCKS = 20;

interface PrefixBlock {
  readonly hash: string;
  /** Tokens from the start of the prompt to the end of this block. */
  readonly upTo: number;
  readonly breakpoint: boolean;
}

const tokensOf = (json: string) => Math.ceil(json.length / 4);

/**
 * Every block of a request in prefix order (tools, system, messages), without cache_control, flagged when it had one.
 */
function blocksOf(body: any): Array<{ json: string; breakpoint: boolean }> {
  const out: Array<{ json: string; breakpoint: boolean }> = [];
  const add = (block: unknown) => {
    if (block === null || typeof block !== 'object')
      return out.push({ json: JSON.stringify(block), breakpoint: false });
    const { cache_control, ...rest } = block as Record<string, unknown>;
    out.push({ json: JSON.stringify(rest), breakpoint: cache_control !== undefined });
  };
  for (const tool of body.tools ?? []) add(tool);
  for (const block of typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []))
    add(block);
  for (const message of body.messages ?? []) {
    const content =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content ?? []);
    out.push({ json: `role:${message.role}`, breakpoint: false });
    for (const block of content) add(block);
  }
  return out;
}

/**
 * The prompt cache as the Messages API describes it: each cache_control breakpoint writes the prefix up to it;
 * a later request reads the longest cached prefix ending at a block boundary within 20 blocks before one of its
 * breakpoints. Prefixes shorter than `minTokens` are not cached. Token counts are the loopback's 4 chars/token.
 */
export class LoopbackPromptCache {
  private readonly entries = new Set<string>();

  constructor(private readonly minTokens = 1024) {}

  usage(body: any): CacheUsage {
    let hash = '';
    let upTo = 0;
    const prefix: PrefixBlock[] = blocksOf(body).map((b) => {
      hash = createHash('sha256').update(hash).update(b.json).digest('hex');
      upTo += tokensOf(b.json);
      return { hash, upTo, breakpoint: b.breakpoint };
    });
    const breakpoints = prefix.flatMap((b, i) => (b.breakpoint ? [i] : []));
    const total = upTo;
    if (breakpoints.length === 0)
      return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    let hit = -1;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK_BLOCKS); j--) {
        if (this.entries.has(prefix[j]!.hash)) {
          hit = Math.max(hit, j);
          break;
        }
      }
    }
    const last = breakpoints.at(-1)!;
    for (const bp of breakpoints) if (prefix[bp]!.upTo >= this.minTokens) this.entries.add(prefix[bp]!.hash);
    const read = hit >= 0 ? prefix[hit]!.upTo : 0;
    const cachedUpTo = prefix[last]!.upTo >= this.minTokens ? prefix[last]!.upTo : read;
    const created = Math.max(0, cachedUpTo - read);
    return {
      input_tokens: total - read - created,
      cache_creation_input_tokens: created,
      cache_read_input_tokens: read,
    };
  }
}
