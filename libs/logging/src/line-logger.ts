/** The part of a pino logger that libraries log through (pino loggers fit it as they are). */
export interface LineLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** JSON lines on stderr, for code that logs before (or without) a process logger. */
export const consoleLogger: LineLogger = {
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj })),
  warn: (obj, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...obj })),
};

let processLogger: LineLogger = consoleLogger;

/**
 * Sets the logger of code that runs outside any service's dependency injection (a client's connection events):
 * the process's root logger, set once at boot.
 */
export function setProcessLogger(logger: LineLogger): void {
  processLogger = logger;
}

/** The process's logger for code outside dependency injection; JSON lines on stderr until one is set. */
export function getProcessLogger(): LineLogger {
  return processLogger;
}
