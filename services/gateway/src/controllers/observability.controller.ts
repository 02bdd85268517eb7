import { Controller, Get, Res } from '@nestjs/common';
import { metricsRegistry } from '#metrics';
import type { FastifyReply } from 'fastify';
import { openApiDocument } from '../openapi/openapi.document.js';

/** What operators and tools read about the API itself: Prometheus metrics (behind the API key) and the OpenAPI document. */
@Controller()
export class ObservabilityController {
  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    const text = await metricsRegistry.metrics();
    void reply.status(200).header('content-type', metricsRegistry.contentType).send(text);
  }

  /** OpenAPI 3.1, generated from the zod contracts; open like /health, it holds nothing a key protects. */
  @Get('openapi.json')
  openapi(): Record<string, unknown> {
    return openApiDocument();
  }
}
