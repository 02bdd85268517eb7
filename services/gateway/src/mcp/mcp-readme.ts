/** The README's marked span that states what the MCP endpoint offers: `<!-- mcp-tools -->…<!-- /mcp-tools -->`. */
export const README_MCP_SPAN = /<!-- mcp-tools -->(.*?)<!-- \/mcp-tools -->/;

/**
 * How the README states the MCP tools, made from the tool list itself: the count, then each family of names
 * (`memory_search` and `memory_record` are `memory_*`; a name without a family stands alone) in first-seen order.
 */
export function mcpToolsSentence(names: readonly string[]): string {
  const families: string[] = [];
  for (const name of names) {
    const family = name.includes('_') ? `${name.slice(0, name.indexOf('_'))}_*` : name;
    if (!families.includes(family)) families.push(family);
  }
  return `${names.length} tools (${families.map((f) => `\`${f}\``).join(', ')})`;
}
