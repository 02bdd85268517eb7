import { pino, type Logger as PinoLogger, type LevelWithSilent } from 'pino';

export type Logger = PinoLogger;

/** The process's root JSON logger; services derive children with their class name as context. */
export function createLogger(options: { service: string; level: LevelWithSilent; instance?: string }): Logger {
  return pino({
    level: options.level,
    base: { service: options.service, instance: options.instance ?? `${process.pid}` },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A child for one class, optionally bound to the correlation id of the message being handled. */
export function contextLogger(root: Logger, context: string, correlationId?: string): Logger {
  return root.child(correlationId ? { context, correlationId } : { context });
}

export const LOGGER = Symbol('LOGGER');
