import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import {
  ConversationIngestBody,
  FeedbackBody,
  MemoryBatchCreateBody,
  MemoryBatchDeleteBody,
  MemoryCreateBody,
  MemoryId,
  MemoryListQuery,
  MemoryRoutes,
  MemoryUpdateBody,
  SearchQuery,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/** The seed's memory endpoints: validate with the contracts, forward over the bus. */
@Controller()
export class MemoriesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post('memories')
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const memory = parseInput(MemoryCreateBody, body);
    return this.bus.request(MemoryRoutes.create, { scope: c.scope, memory, writer: c.writer }, { context: c.context });
  }

  @Post('memories/batch')
  @HttpCode(201)
  batchCreate(@CallerParam() c: Caller, @Body() body: unknown) {
    const { memories } = parseInput(MemoryBatchCreateBody, body);
    return this.bus.request(
      MemoryRoutes.batchCreate,
      { scope: c.scope, memories, writer: c.writer },
      { context: c.context },
    );
  }

  @Post('conversations')
  @HttpCode(201)
  ingestConversation(@CallerParam() c: Caller, @Body() body: unknown) {
    const conversation = parseInput(ConversationIngestBody, body);
    return this.bus.request(
      MemoryRoutes.ingestConversation,
      { scope: c.scope, conversation, writer: c.writer },
      { context: c.context },
    );
  }

  @Get('memories')
  list(@CallerParam() c: Caller, @Query() query: unknown) {
    const parsed = parseInput(MemoryListQuery, query);
    return this.bus.request(MemoryRoutes.list, { scope: c.scope, query: parsed }, { context: c.context });
  }

  @Delete('memories')
  batchDelete(@CallerParam() c: Caller, @Body() body: unknown) {
    const { ids } = parseInput(MemoryBatchDeleteBody, body);
    return this.bus.request(MemoryRoutes.batchDelete, { scope: c.scope, ids }, { context: c.context });
  }

  @Get('memories/:id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(MemoryRoutes.get, { scope: c.scope, id: parseInput(MemoryId, id) }, { context: c.context });
  }

  @Put('memories/:id')
  update(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const patch = parseInput(MemoryUpdateBody, body);
    return this.bus.request(
      MemoryRoutes.update,
      { scope: c.scope, id: parseInput(MemoryId, id), patch },
      { context: c.context },
    );
  }

  @Delete('memories/:id')
  delete(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(
      MemoryRoutes.delete,
      { scope: c.scope, id: parseInput(MemoryId, id) },
      { context: c.context },
    );
  }

  @Get('memories/:id/history')
  history(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(
      MemoryRoutes.history,
      { scope: c.scope, id: parseInput(MemoryId, id) },
      { context: c.context },
    );
  }

  @Post('memories/:id/feedback')
  @HttpCode(200)
  feedback(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const feedback = parseInput(FeedbackBody, body);
    return this.bus.request(
      MemoryRoutes.feedback,
      { scope: c.scope, id: parseInput(MemoryId, id), feedback },
      { context: c.context },
    );
  }

  @Get('search')
  search(@CallerParam() c: Caller, @Query() query: unknown) {
    const parsed = parseInput(SearchQuery, query);
    return this.bus.request(MemoryRoutes.search, { scope: c.scope, query: parsed }, { context: c.context });
  }
}
