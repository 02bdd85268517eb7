import { randomUUID } from 'node:crypto';
import { Body, Controller, Delete, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ConfirmBody, SessionId, TurnBody, TurnRoutes, TurnTopics, type TurnEvent, type TurnResult } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { followTurn } from '#runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionCaller } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

function sessionId(raw: string): string {
  if (!SessionId.safeParse(raw).success) throw AlfredError.notFound('session', raw);
  return raw;
}

function wantsJson(req: FastifyRequest, body: TurnBody, query: Record<string, unknown>): boolean {
  if (body.stream !== undefined) return !body.stream;
  if (query.stream === 'false') return true;
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/event-stream');
}

async function collect(stream: AsyncIterable<TurnEvent>, turnId: string, session: string): Promise<TurnResult> {
  const result: TurnResult = { turn_id: turnId, session_id: session, status: 'failed', text: '', stop_reason: null, rounds: 0, tool_calls: [], usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_calls: 0 }, error: null };
  const calls = new Map<string, TurnResult['tool_calls'][number]>();
  for await (const e of stream) {
    if (e.type === 'tool_call') calls.set(e.id, { id: e.id, name: e.name, input: e.input, is_error: false });
    else if (e.type === 'tool_result') calls.set(e.id, { ...calls.get(e.id)!, is_error: e.is_error });
    else if (e.type === 'message') Object.assign(result, { text: e.text, stop_reason: e.stop_reason });
    else if (e.type === 'usage') result.usage = e.usage;
    else if (e.type === 'error') result.error = e.error;
    else if (e.type === 'done') Object.assign(result, { status: e.status, rounds: e.rounds });
  }
  result.tool_calls = [...calls.values()];
  return result;
}

/** Agent turns on a session: SSE (default) or one JSON result; confirmations and cancellation reach any worker. */
@Controller('sessions')
export class TurnsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post(':id/turns')
  async turn(@CallerParam() caller: Caller, @Param('id') id: string, @Body() raw: unknown, @Query() query: Record<string, unknown>, @Req() req: FastifyRequest, @Res() reply: FastifyReply) {
    const body = parseInput(TurnBody, raw ?? {});
    const session = sessionId(id);
    const c = await sessionCaller(this.bus, caller, session);
    const turnId = `turn-${randomUUID().replaceAll('-', '')}`;
    // Listen before starting: the first event may be emitted before the start reply arrives.
    const events = await this.bus.listen(TurnTopics.events, { key: turnId });
    try {
      const apiKey = req.alfred.apiKey;
      await this.bus.request(
        TurnRoutes.start,
        { scope: c.scope, session_id: session, turn_id: turnId, message: body.message, ...(apiKey ? { api_key: apiKey } : {}) },
        { context: c.context },
      );
    } catch (err) {
      events.close();
      throw err;
    }
    const stream = followTurn(events, turnId);
    if (wantsJson(req, body, query)) return reply.status(200).send(await collect(stream, turnId, session));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-correlation-id': c.context.correlationId });
    res.once('close', () => events.close());
    for await (const e of stream) {
      if (res.destroyed) break;
      res.write(e.type === 'heartbeat' ? ': heartbeat\n\n' : `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    }
    res.end();
  }

  @Delete(':id/turns/current')
  async cancel(@CallerParam() caller: Caller, @Param('id') id: string) {
    const c = await sessionCaller(this.bus, caller, sessionId(id));
    return this.bus.request(TurnRoutes.cancel, { scope: c.scope, session_id: id }, { context: c.context });
  }

  @Post(':id/confirm')
  @HttpCode(200)
  async confirm(@CallerParam() caller: Caller, @Param('id') id: string, @Body() raw: unknown) {
    const { request_id, approve } = parseInput(ConfirmBody, raw ?? {});
    const c = await sessionCaller(this.bus, caller, sessionId(id));
    return this.bus.request(TurnRoutes.confirm, { scope: c.scope, session_id: id, request_id, approve }, { context: c.context });
  }
}
