import MarkdownIt from 'markdown-it';
import type { MessageEntity } from 'grammy/types';

/** Text with Telegram message entities (offsets and lengths in UTF-16 code units, as JavaScript strings count). */
export interface FormattedText {
  readonly text: string;
  readonly entities: MessageEntity[];
}

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];
type EntityType = 'bold' | 'italic' | 'strikethrough' | 'code' | 'pre' | 'text_link' | 'blockquote';

const markdown = new MarkdownIt({ html: false, linkify: false, breaks: false });

const INLINE_ENTITY: Record<string, EntityType> = {
  strong_open: 'bold',
  em_open: 'italic',
  s_open: 'strikethrough',
  link_open: 'text_link',
};
const INLINE_CLOSE = new Set(['strong_close', 'em_close', 's_close', 'link_close']);

interface Open {
  readonly type: EntityType;
  readonly offset: number;
  readonly url?: string;
  readonly language?: string;
}

/** Builds text and entities from markdown-it tokens; open entities close in LIFO order, as markdown nests them. */
class Builder {
  text = '';
  /** Cells written in the current table row. */
  cell = 0;
  readonly entities: MessageEntity[] = [];
  private readonly open: Open[] = [];
  private readonly lists: Array<{ ordered: boolean; next: number }> = [];

  push(type: EntityType, extra: { url?: string; language?: string } = {}): void {
    this.open.push({ type, offset: this.text.length, ...extra });
  }

  pop(): void {
    const o = this.open.pop();
    if (!o) return;
    const length = this.text.length - o.offset;
    if (length <= 0) return;
    const base = { offset: o.offset, length };
    if (o.type === 'text_link') this.entities.push({ type: 'text_link', url: o.url!, ...base });
    else if (o.type === 'pre')
      this.entities.push({ type: 'pre', ...(o.language ? { language: o.language } : {}), ...base });
    else this.entities.push({ type: o.type, ...base });
  }

  /** Separates blocks: a blank line between top-level blocks, a single newline inside lists. */
  block(): void {
    if (this.text.length === 0) return;
    const sep = this.lists.length > 0 ? '\n' : '\n\n';
    const trailing = this.text.length - this.text.trimEnd().length;
    if (trailing < sep.length) this.text += sep.slice(trailing);
  }

  listOpen(ordered: boolean, start: number): void {
    this.block();
    this.lists.push({ ordered, next: start });
  }

  listClose(): void {
    this.lists.pop();
  }

  listItem(): void {
    this.block();
    const list = this.lists.at(-1);
    if (!list) return;
    const indent = '   '.repeat(this.lists.length - 1);
    this.text += list.ordered ? `${indent}${list.next++}. ` : `${indent}• `;
  }

  finish(): FormattedText {
    while (this.open.length > 0) this.pop();
    const text = this.text.trimEnd();
    const entities = this.entities
      .map((e) => ({ ...e, length: Math.min(e.length, text.length - e.offset) }))
      .filter((e) => e.length > 0)
      .sort((a, b) => a.offset - b.offset || b.length - a.length);
    return { text, entities };
  }
}

function inline(b: Builder, children: readonly Token[]): void {
  for (const t of children) {
    const type = INLINE_ENTITY[t.type];
    if (type) b.push(type, type === 'text_link' ? { url: String(t.attrGet('href') ?? '') } : {});
    else if (INLINE_CLOSE.has(t.type)) b.pop();
    else if (t.type === 'code_inline') {
      b.push('code');
      b.text += t.content;
      b.pop();
    } else if (t.type === 'softbreak' || t.type === 'hardbreak') b.text += '\n';
    else if (t.type === 'image') b.text += t.content || t.attrGet('alt') || '';
    else b.text += t.content;
  }
}

function blockToken(b: Builder, t: Token): void {
  switch (t.type) {
    case 'heading_open':
      b.block();
      b.push('bold');
      return;
    case 'heading_close':
      b.pop();
      return;
    case 'paragraph_open':
      if (!t.hidden) b.block();
      return;
    case 'bullet_list_open':
    case 'ordered_list_open':
      b.listOpen(t.type === 'ordered_list_open', Number(t.attrGet('start') ?? 1));
      return;
    case 'bullet_list_close':
    case 'ordered_list_close':
      b.listClose();
      return;
    case 'list_item_open':
      b.listItem();
      return;
    case 'blockquote_open':
      b.block();
      b.push('blockquote');
      return;
    case 'blockquote_close':
      b.pop();
      return;
    case 'fence':
    case 'code_block':
      b.block();
      b.push('pre', { language: t.info.trim().split(/\s+/)[0] || undefined });
      b.text += t.content.replace(/\n$/, '');
      b.pop();
      return;
    case 'hr':
      b.block();
      b.text += '———';
      return;
    case 'tr_open':
      if (b.text.length > 0 && !b.text.endsWith('\n')) b.text += '\n';
      b.cell = 0;
      return;
    case 'th_open':
    case 'td_open':
      if (b.cell++ > 0) b.text += ' | ';
      return;
    case 'table_open':
      b.block();
      return;
    case 'inline':
      inline(b, t.children ?? []);
      return;
    case 'html_block':
      b.block();
      b.text += t.content.replace(/\n$/, '');
      return;
    default:
  }
}

/**
 * Renders the agent's Markdown as Telegram text plus entities (bold, italic, code, pre with language, links,
 * quotes), so no markup can break when the text is cut: Telegram never has to parse Markdown at all.
 */
export function renderMarkdown(source: string): FormattedText {
  const b = new Builder();
  for (const t of markdown.parse(source, {})) blockToken(b, t);
  return b.finish();
}
