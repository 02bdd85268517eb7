import type { LoggerService } from '@nestjs/common';
import type { Logger } from './logger.js';

/**
 * Routes Nest's own log lines into pino so every line is JSON. Nest's start-up chatter (route
 * mapping, module init) goes to debug; warnings and errors stay visible.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
