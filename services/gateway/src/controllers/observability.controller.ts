import { Controller, Get, Res } from '@nestjs/common';
import { metricsRegistry } from '#metrics';
import type { FastifyReply } from 'fastify';

/** What operators and tools read about the API itself: Prometheus metrics (behind the API key, like every route). */
@Controller()
export class ObservabilityController {
  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    const text = await metricsRegistry.metrics();
    void reply.status(200).header('content-type', metricsRegistry.contentType).send(text);
  }
}
