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

export const LOGGER = Symbol('LOGGER');
