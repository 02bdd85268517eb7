/** The kinds of content that address the model instead of describing the world. */
export const InjectionFamily = {
  Instruction: 'instruction',
  RoleMarker: 'role-marker',
  ToolMarkup: 'tool-markup',
  InvisibleUnicode: 'invisible-unicode',
} as const;
export type InjectionFamily = (typeof InjectionFamily)[keyof typeof InjectionFamily];

/** One reason a text was flagged: its family, which pattern, and where (a character offset). */
export interface InjectionReason {
  readonly family: InjectionFamily;
  readonly rule: string;
  readonly position: number;
}

interface Pattern {
  readonly family: InjectionFamily;
  readonly rule: string;
  readonly re: RegExp;
}

/** One regular expression written in pieces (each a pattern of its own, cut between atoms), read as one. */
function joined(flags: string, ...pieces: RegExp[]): RegExp {
  return new RegExp(pieces.map((p) => p.source).join(''), flags);
}

const I = InjectionFamily.Instruction;
const R = InjectionFamily.RoleMarker;
const T = InjectionFamily.ToolMarkup;
const U = InjectionFamily.InvisibleUnicode;

/**
 * Patterns that only make sense as words to a model. Mentions of instructions that describe the world
 * ("the user's build instructions are…", "the assistant should answer in French") are deliberately not
 * matched: the bench's test set (bench/data/injection-set.json) holds such benign texts and measures it.
 */
const PATTERNS: readonly Pattern[] = [
  {
    family: I,
    rule: 'override-previous-instructions',
    re: joined(
      'i',
      /\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+)*/,
      /(?:previous|prior|above|earlier|preceding|original|existing|system|safety)/,
      /\s+(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints)\b/,
    ),
  },
  {
    family: I,
    rule: 'persona-switch',
    re: joined(
      'i',
      /\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\s+(?:will|must|are|should|shall)\b|/,
      /\bact\s+as\s+(?:an?\s+)?(?:unrestricted|jailbroken|unfiltered)\b|/,
      /\b(?:enter|enable|activate)\s+(?:developer|god|DAN|jailbreak)\s+mode\b/,
    ),
  },
  {
    family: I,
    rule: 'new-instructions',
    re: joined(
      'i',
      /\b(?:new|updated|real|actual|hidden|secret|important)\s+(?:system\s+)?/,
      /instructions?\s*(?:for\s+(?:the\s+)?(?:assistant|AI|model|agent)\s*)?:/,
    ),
  },
  {
    family: I,
    rule: 'prompt-extraction',
    re: joined(
      'i',
      /\b(?:reveal|print|show|output|repeat|leak|dump)\s+(?:me\s+)?(?:your|the)/,
      /\s+(?:full\s+|entire\s+|hidden\s+|initial\s+)?/,
      /(?:system\s+prompt|hidden\s+prompt|initial\s+prompt|instructions\s+above)\b/,
    ),
  },
  {
    family: I,
    rule: 'hide-from-user',
    re: joined(
      'i',
      /\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to|reveal\s+(?:this\s+|it\s+)?to|let)/,
      /\s+the\s+user\b/,
    ),
  },
  {
    family: I,
    rule: 'addressed-to-model',
    re: joined(
      'i',
      /\b(?:attention|note\s+to|message\s+(?:to|for))\s+(?:the\s+)?/,
      /(?:AI|assistant|language\s+model|LLM|agent|Claude|chatbot)\s*[:,!]|/,
      /\b(?:AI|assistant|LLM|Claude),?\s+(?:you\s+must|you\s+are\s+instructed|I\s+command)\b|/,
      /\bwhen\s+(?:an?\s+)?(?:AI|assistant|LLM|model|agent)\s+reads\s+this\b/,
    ),
  },
  {
    family: I,
    rule: 'exfiltration',
    re: joined(
      'i',
      /\b(?:send|upload|exfiltrate|forward|post|email|transmit|copy)\s+(?:all\s+|every\s+|the\s+)?(?:of\s+)?/,
      /(?:the\s+)?(?:user'?s?\s+)?/,
      /(?:files|data|credentials|secrets|api\s+keys|passwords|tokens|conversation(?:\s+history)?|memories|ssh\s+keys)/,
      /\s+to\s+(?:https?:\/\/|\S+@\S+|[a-z0-9-]+\.[a-z]{2,})/,
    ),
  },
  {
    family: R,
    rule: 'chat-template-token',
    re: joined(
      'i',
      /<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id)\|>|\[\/?INST\]|/,
      /<<\/?SYS>>/,
    ),
  },
  { family: R, rule: 'role-tag', re: /<\/?(?:system|assistant|human|user)(?:[_-](?:prompt|message|turn))?\s*>/i },
  {
    family: R,
    rule: 'role-line',
    re: /(?:^|\n)\s*(?:#{1,4}\s*)?(?:SYSTEM|System\s+(?:prompt|message)|Human|Assistant|###\s*Instruction)\s*:/,
  },
  {
    family: T,
    rule: 'tool-call-xml',
    re: /<\/?(?:function_calls|invoke|tool_use|tool_call|tool_result|function_call|parameter\s+name=)[\s>=]/i,
  },
  { family: T, rule: 'tool-call-json', re: /"type"\s*:\s*"tool_use"|"tool_calls"\s*:\s*\[|"function_call"\s*:\s*\{/ },
  { family: U, rule: 'unicode-tag-characters', re: /[\u{E0000}-\u{E007F}]/u },
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: single zero-width characters; U+200D joins nothing
  { family: U, rule: 'zero-width-run', re: /[\u200B\u200C\u200D\u2060\uFEFF\u180E]{2,}/u },
  { family: U, rule: 'bidi-override', re: /[\u202A-\u202E\u2066-\u2069]/u },
];

/**
 * Flags text that addresses the model (instructions to the assistant, role markers, tool-call-like markup,
 * invisible Unicode). Flagged memories are stored but marked, and kept out of automatic prompt recall.
 */
export function detectInjection(text: string): InjectionReason[] {
  const reasons: InjectionReason[] = [];
  for (const p of PATTERNS) {
    const m = p.re.exec(text);
    if (m) reasons.push({ family: p.family, rule: p.rule, position: m.index + (m[0].startsWith('\n') ? 1 : 0) });
  }
  return reasons;
}

/** Short, human-readable reasons ("instruction/override-previous-instructions at 12"). */
export function describeReasons(reasons: readonly InjectionReason[]): string[] {
  return reasons.map((r) => `${r.family}/${r.rule} at ${r.position}`);
}
