import { readFileSync, writeFileSync } from 'node:fs';
import { MCP_TOOLS } from './mcp-tools.js';
import { mcpToolsSentence, README_MCP_SPAN } from './mcp-readme.js';

const README = new URL('../../../../README.md', import.meta.url);

describe('README and the MCP tools', () => {
  describe(mcpToolsSentence.name, () => {
    it('should count the tools and name each family once, in order', () => {
      expect(mcpToolsSentence(['memory_search', 'memory_record', 'recall', 'skills_get'])).toBe(
        '4 tools (`memory_*`, `recall`, `skills_*`)',
      );
    });
  });

  it('should state the tool count the code has (ALFRED_UPDATE_README=1 rewrites the span)', () => {
    const readme = readFileSync(README, 'utf8');
    const span = README_MCP_SPAN.exec(readme);
    expect(span).not.toBeNull();
    const wanted = mcpToolsSentence(MCP_TOOLS.map((t) => t.name));
    if (span![1] !== wanted && process.env.ALFRED_UPDATE_README === '1') {
      writeFileSync(README, readme.replace(README_MCP_SPAN, `<!-- mcp-tools -->${wanted}<!-- /mcp-tools -->`));
      return;
    }
    expect(span![1]).toBe(wanted);
  });
});
