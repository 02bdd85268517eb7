import { randomUUID } from 'node:crypto';
import { Body, Controller, Delete, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ConfirmBody, SessionId, TurnBody, TurnRoutes, TurnTopics, type TurnEvent, type TurnResult } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { followTurn } from '#runtime';
import { LOGGER, type Logger } from '#logging';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionCaller } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { ScopedCredentials } from '../http/scoped-credential.js';
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

/**
 * Passes the events through; once the turn's `done` has passed (or the worker was lost, which ends the stream with a
 * failed `done`), its credential is revoked. Agent-runtime revokes it too, at every end of the turn: this covers the
 * worker that died before it could.
 */
async function* revokeAtDone(stream: AsyncIterable<TurnEvent>, revoke: () => Promise<void>): AsyncGenerator<TurnEvent> {
  for await (const event of stream) {
    if (event.type === 'done') await revoke();
    yield event;
  }
}

async function collect(stream: AsyncIterable<TurnEvent>, turnId: string, session: string): Promise<TurnResult> {
  const result: TurnResult = {
    turn_id: turnId,
    session_id: session,
    status: 'failed',
    text: '',
    stop_reason: null,
    rounds: 0,
    tool_calls: [],
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      model_calls: 0,
    },
    error: null,
  };
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
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(ScopedCredentials) private readonly credentials: ScopedCredentials,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post(':id/turns')
  async turn(
    @CallerParam() caller: Caller,
    @Param('id') id: string,
    @Body() raw: unknown,
    @Query() query: Record<string, unknown>,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ) {
    const body = parseInput(TurnBody, raw ?? {});
    const session = sessionId(id);
    const c = await sessionCaller(this.bus, caller, session);
    const turnId = `turn-${randomUUID().replaceAll('-', '')}`;
    // Listen before starting: the first event may be emitted before the start reply arrives.
    const events = await this.bus.listen(TurnTopics.events, { key: turnId });
    // The agent's bash never gets the caller's key: a credential for this tenant, agent and session, ended with the
    // turn.
    const credential = this.credentials.mint({ tenant: c.scope.tenant, agent: c.scope.agent, session, turn: turnId });
    try {
      await this.bus.request(
        TurnRoutes.start,
        { scope: c.scope, session_id: session, turn_id: turnId, message: body.message, credential },
        { context: c.context },
      );
    } catch (err) {
      events.close();
      await this.revoke(credential);
      throw err;
    }
    const stream = revokeAtDone(followTurn(events, turnId), () => this.revoke(credential));
    if (wantsJson(req, body, query)) return reply.status(200).send(await collect(stream, turnId, session));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-correlation-id': c.context.correlationId,
    });
    // A client that disconnects does not end the turn: the events are followed to its end (or the worker's loss),
    // when the credential is revoked, written to nobody.
    for await (const e of stream) {
      if (res.destroyed) continue;
      res.write(e.type === 'heartbeat' ? ': heartbeat\n\n' : `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    }
    res.end();
  }

  /** Revokes a turn's credential; a failure (NATS away) is logged, and agent-runtime's own revocation remains. */
  private async revoke(credential: string): Promise<void> {
    await this.credentials
      .revoke(credential)
      .catch((err: unknown) => this.logger.warn({ err: String(err) }, "could not revoke a turn's credential"));
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
    return this.bus.request(
      TurnRoutes.confirm,
      { scope: c.scope, session_id: id, request_id, approve },
      { context: c.context },
    );
  }
}
