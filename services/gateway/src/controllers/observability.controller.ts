import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { MetricsHistory } from '#contracts';
import { metricsRegistry } from '#metrics';
import type { FastifyReply } from 'fastify';
import { RequestHistory } from '../http/request-history.js';
import { openApiDocument } from '../openapi/openapi.document.js';

/**
 * What operators and tools read about the API itself: Prometheus metrics (behind the API key) and the OpenAPI document.
 */
@Controller()
export class ObservabilityController {
  constructor(@Inject(RequestHistory) private readonly history: RequestHistory) {}

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    const text = await metricsRegistry.metrics();
    void reply.status(200).header('content-type', metricsRegistry.contentType).send(text);
  }

  /** The last hour of this gateway's request rate, 5xx rate and latency (the console's Operations chart). */
  @Get('metrics/history')
  recent(): MetricsHistory {
    return this.history.view();
  }

  /** OpenAPI 3.1, generated from the zod contracts; open like /health, it holds nothing a key protects. */
  @Get('openapi.json')
  openapi(): Record<string, unknown> {
    return openApiDocument();
  }
}
