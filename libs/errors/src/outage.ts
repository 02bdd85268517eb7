import { ErrorCode } from '#contracts';
import { AlfredError } from './alfred-error.js';

/** Seconds a client is told to wait (Retry-After) while a dependency is away. */
export const RETRY_AFTER_SECONDS = 2;

/** The error every request gets at once while a dependency is away: 503 with a retry hint, never a hang. */
export function dependencyUnavailable(dependency: string, what: string): AlfredError {
  return new AlfredError(
    ErrorCode.ServiceUnavailable,
    `${dependency} is unavailable (reconnecting); could not ${what}`,
    {
      dependency,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
    },
  );
}

/** Recognises an error of a dependency's client that means "the dependency is away" and gives the 503 to answer. */
export type OutageClassifier = (err: unknown, subject: string) => AlfredError | undefined;
const outageClassifiers: OutageClassifier[] = [];

/**
 * Adapters of dependencies (Redis) register how their connection failures look, so that a handler's such error is
 * answered 503 by whichever transport carries it, without the transport knowing the dependency.
 */
export function registerOutageClassifier(classify: OutageClassifier): void {
  if (!outageClassifiers.includes(classify)) outageClassifiers.push(classify);
}

/** The 503 a registered classifier makes of `err`, or undefined when no dependency claims it. */
export function classifyOutage(err: unknown, subject: string): AlfredError | undefined {
  for (const classify of outageClassifiers) {
    const outage = classify(err, subject);
    if (outage) return outage;
  }
  return undefined;
}
