import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  CheckpointId,
  CheckpointListQuery,
  CheckpointResumeBody,
  CheckpointRoutes,
  CheckpointSaveBody,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { sessionCaller } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/**
 * Checkpoints of work in progress, per agent (a saved session implies its agent): save, list newest first, read, resume
 * into a new session.
 */
@Controller('checkpoints')
export class CheckpointsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post()
  @HttpCode(201)
  async save(@CallerParam() caller: Caller, @Body() body: unknown) {
    const checkpoint = parseInput(CheckpointSaveBody, body);
    // A checkpoint of a session belongs to the session's agent unless the request names one.
    const c = checkpoint.session_id ? await sessionCaller(this.bus, caller, checkpoint.session_id) : caller;
    return this.bus.request(
      CheckpointRoutes.save,
      { scope: c.scope, checkpoint, writer: c.writer },
      { context: c.context },
    );
  }

  @Get()
  list(@CallerParam() c: Caller, @Query() query: unknown) {
    return this.bus.request(
      CheckpointRoutes.list,
      { scope: c.scope, query: parseInput(CheckpointListQuery, query) },
      { context: c.context },
    );
  }

  @Get(':id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(
      CheckpointRoutes.get,
      { scope: c.scope, id: parseInput(CheckpointId, id) },
      { context: c.context },
    );
  }

  @Post(':id/resume')
  @HttpCode(201)
  resume(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const { level } = parseInput(CheckpointResumeBody, body ?? {});
    return this.bus.request(
      CheckpointRoutes.resume,
      { scope: c.scope, id: parseInput(CheckpointId, id), level },
      { context: c.context },
    );
  }
}
