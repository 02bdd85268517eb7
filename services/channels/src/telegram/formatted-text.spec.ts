import { renderMarkdown } from './formatted-text.js';
import { splitFormatted } from './split.js';

const slice = (text: string, e: { offset: number; length: number }) => text.slice(e.offset, e.offset + e.length);

describe(renderMarkdown.name, () => {
  it('should turn inline Markdown into entities over plain text', () => {
    const ft = renderMarkdown('Use **bold _and italic_**, `code`, ~~gone~~ and [a link](https://example.com).');
    expect(ft.text).toBe('Use bold and italic, code, gone and a link.');
    const by = Object.fromEntries(ft.entities.map((e) => [e.type, slice(ft.text, e)]));
    expect(by).toEqual({
      bold: 'bold and italic',
      italic: 'and italic',
      code: 'code',
      strikethrough: 'gone',
      text_link: 'a link',
    });
    expect(ft.entities.find((e) => e.type === 'text_link')).toMatchObject({ url: 'https://example.com' });
  });

  it('should render blocks: headings bold, lists with markers, quotes, fenced code with its language', () => {
    const ft = renderMarkdown('# Plan\n\n- one\n- two\n  1. nested\n\n> quoted\n\n```ts\nconst x = 1;\n```');
    expect(ft.text).toBe('Plan\n\n• one\n• two\n   1. nested\n\nquoted\n\nconst x = 1;');
    expect(ft.entities).toContainEqual({ type: 'bold', offset: 0, length: 4 });
    expect(ft.entities).toContainEqual({ type: 'blockquote', offset: ft.text.indexOf('quoted'), length: 6 });
    expect(ft.entities).toContainEqual({ type: 'pre', language: 'ts', offset: ft.text.indexOf('const'), length: 12 });
  });

  it('should leave unfinished Markdown (a reply still streaming) as literal text', () => {
    expect(renderMarkdown('Half **done').text).toBe('Half **done');
  });

  it('should count entity offsets in UTF-16 units, as Telegram does', () => {
    const ft = renderMarkdown('😀 **bold**');
    expect(ft.entities).toEqual([{ type: 'bold', offset: 3, length: 4 }]);
  });
});

describe(splitFormatted.name, () => {
  it('should keep a short text whole', () => {
    const ft = renderMarkdown('short');
    expect(splitFormatted(ft, 4096)).toEqual([ft]);
  });

  it('should cut at line breaks and continue an entity that spans a cut in the next piece', () => {
    const code = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const ft = renderMarkdown(`Intro paragraph.\n\n\`\`\`\n${code}\n\`\`\``);
    const pieces = splitFormatted(ft, 100);
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces) {
      expect(p.text.length).toBeLessThanOrEqual(100);
      for (const e of p.entities) expect(e.offset + e.length).toBeLessThanOrEqual(p.text.length);
    }
    for (const p of pieces.slice(1)) expect(p.text).toMatch(/^line \d+(\nline \d+)*$/);
    for (const p of pieces) expect(p.entities.filter((e) => e.type === 'pre')).toHaveLength(1);
    expect(pieces.map((p) => p.text).join('\n')).toBe(ft.text);
  });

  it('should cut a text without spaces hard, but never inside a surrogate pair', () => {
    const ft = { text: `${'a'.repeat(9)}😀${'b'.repeat(5)}`, entities: [] };
    const pieces = splitFormatted(ft, 10);
    expect(pieces[0]!.text).toBe('a'.repeat(9));
    expect(pieces.map((p) => p.text).join('')).toBe(ft.text);
  });
});
