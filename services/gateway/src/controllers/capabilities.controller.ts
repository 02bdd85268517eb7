import { Body, Controller, Headers, HttpCode, Inject, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  CompactBody,
  CompactorRoutes,
  DistillBody,
  DistillerRoutes,
  ErrorCode,
  LearnBody,
  LearnerRoutes,
  SessionId,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { sessionCaller } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

export const SESSION_HEADER = 'x-alfred-session';

/** Model-backed work may take a while (the model's own timeout and retries bound it). */
export const CAPABILITY_TIMEOUT_MS = 180_000;

/** The session `/compact` acts on: `session_id` in the body or the X-Alfred-Session header (equal when both). */
function sessionOf(bodyId: string | undefined, header: string | undefined): string {
  const fromHeader = header === undefined || header === '' ? undefined : header;
  if (bodyId && fromHeader && bodyId !== fromHeader) {
    throw new AlfredError(ErrorCode.BadRequest, 'session_id and the X-Alfred-Session header name different sessions');
  }
  const id = bodyId ?? fromHeader;
  if (!id)
    throw new AlfredError(
      ErrorCode.BadRequest,
      'no session: send session_id in the body or the X-Alfred-Session header',
    );
  if (!SessionId.safeParse(id).success) throw AlfredError.notFound('session', id);
  return id;
}

/** The seed's capability endpoints: /distill, /learn, /compact. */
@Controller()
export class CapabilitiesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** 200 with the distill result's fields when the job finished within the short wait, else 202 with its job id. */
  @Post('distill')
  async distill(@CallerParam() c: Caller, @Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    const request = parseInput(DistillBody, body ?? {});
    const answer = await this.bus.request(
      DistillerRoutes.distill,
      { scope: c.scope, request },
      { context: c.context, timeoutMs: 60_000 },
    );
    void reply.status(answer.status === 'processing' ? 202 : 200);
    return answer;
  }

  @Post('learn')
  @HttpCode(200)
  learn(@CallerParam() c: Caller, @Body() body: unknown) {
    const request = parseInput(LearnBody, body);
    return this.bus.request(
      LearnerRoutes.learn,
      { scope: c.scope, request },
      { context: c.context, timeoutMs: CAPABILITY_TIMEOUT_MS },
    );
  }

  @Post('compact')
  @HttpCode(200)
  async compact(
    @CallerParam() caller: Caller,
    @Body() body: unknown,
    @Headers(SESSION_HEADER) header: string | undefined,
  ) {
    const { session_id, instructions, preserve_recent } = parseInput(CompactBody, body ?? {});
    const id = sessionOf(session_id, header);
    const c = await sessionCaller(this.bus, caller, id);
    const payload = { scope: c.scope, session_id: id, instructions, preserve_recent };
    return this.bus.request(CompactorRoutes.compact, payload, { context: c.context, timeoutMs: CAPABILITY_TIMEOUT_MS });
  }
}
