import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '#contracts';
import { type Bus } from '#bus';
import { AlfredError, zodToAlfredError } from '#errors';
import type { Logger } from '#logging';
import type { Caller } from '../http/caller.js';
import { API_VERSION } from '../api-info.js';
import { SKILL_URI_TEMPLATE, SkillResources } from './mcp-resources.js';
import { inputJsonSchema, MCP_TOOLS, type McpTool } from './mcp-tools.js';

const TOOLS = new Map(MCP_TOOLS.map((t) => [t.name, t]));
const TOOL_LIST = MCP_TOOLS.map((t) => ({
  name: t.name,
  description: t.description,
  inputSchema: inputJsonSchema(t.input),
  ...(t.annotations ? { annotations: t.annotations } : {}),
}));

/**
 * One MCP server for one HTTP request (stateless Streamable HTTP): it acts for the request's caller, so
 * tenant and agent scoping are exactly those of the REST API. Tool failures are tool results with
 * `isError` and the API's error body; protocol misuse (an unknown tool) is a JSON-RPC error.
 */
export function createMcpServer(bus: Bus, caller: Caller, logger: Logger): Server {
  const server = new Server(
    { name: 'alfred', version: API_VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Alfred: skills, memories, checkpoints and error remediations for this agent. Start with recall or ' +
        'skills_search; record what you learn with memory_record and remediation_record.',
    },
  );
  const resources = new SkillResources(bus, caller.context, caller.scope.tenant, caller.policy?.skills);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = TOOLS.get(req.params.name);
    if (!tool) throw new McpError(McpErrorCode.InvalidParams, `unknown tool ${req.params.name}; tools/list names them`);
    return callTool(tool, bus, caller, req.params.arguments ?? {}, logger);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => resources.list());
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: SKILL_URI_TEMPLATE,
        name: 'skill-file',
        description: "A file of a skill's folder (SKILL.md or a resource)",
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    try {
      return await resources.read(req.params.uri);
    } catch (err) {
      const e = asAlfredError(err, logger);
      throw new McpError(
        e.code === ErrorCode.NotFound ? -32002 : McpErrorCode.InvalidParams,
        e.message,
        e.toBody().error,
      );
    }
  });
  return server;
}

async function callTool(
  tool: McpTool,
  bus: Bus,
  caller: Caller,
  args: unknown,
  logger: Logger,
): Promise<CallToolResult> {
  try {
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) throw zodToAlfredError(parsed.error);
    const result = (await tool.run(bus, caller, parsed.data)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (err) {
    const body = asAlfredError(err, logger).toBody();
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  }
}

function asAlfredError(err: unknown, logger: Logger): AlfredError {
  if (err instanceof AlfredError) return err;
  logger.error({ err }, 'MCP request failed');
  return new AlfredError(ErrorCode.Internal, 'internal error', undefined, { cause: err });
}
