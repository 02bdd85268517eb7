import { All, Controller, Inject, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { BUS, type Bus } from '#bus';
import { LOGGER, type Logger } from '#logging';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AGENT_DIRECTORY, callerPolicy, type AgentDirectory } from '../http/agent-directory.js';
import { callerOf } from '../http/caller.js';
import { createMcpServer } from './mcp-server.factory.js';

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST gets its own server and transport (no session to
 * pin to a gateway instance). Auth ran in the onRequest hook like for every route; the agent comes from
 * X-Alfred-Agent. GET and DELETE (streams and sessions) are answered by the transport with 405.
 */
@Controller('mcp')
export class McpController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  @All()
  async handle(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const caller = callerOf(req);
    // Called as an agent, MCP serves only the skills that agent's policy permits (the guard made sure it exists).
    const policy = await callerPolicy(this.agents, caller);
    const server = createMcpServer(this.bus, { ...caller, policy }, this.logger);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      this.logger.error({ err }, 'MCP transport failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
      }
    }
  }
}
