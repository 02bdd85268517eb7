/**
 * The timeouts the functional e2e harnesses give the system they start (the product's defaults: 5 s on the bus,
 * 1 s per service for a health probe, 2 s for `POST /distill` to finish before it answers 202 with a job id).
 *
 * Those suites check behaviour, not latency, and CI runs them two at a time beside other suites' servers on two
 * vCPUs, each system inside its jest worker's event loop (the one-minute load average reached 5.3 when sampled every
 * 30 s through a CI run): a write that takes the embedded system more than 5 s there, or a health probe more than
 * 1 s, or a distillation more than 2 s, is noise, and answering it 504, 503 or 202 fails an assertion about
 * something else. Latency is measured by `npm run bench`, and the suites about timeouts (bus-failures, the fault
 * suites, whose distill wait is 0 to test the 202 path) set their own.
 */
export const FUNCTIONAL_TIMEOUTS = {
  ALFRED_BUS_TIMEOUT_MS: '20000',
  ALFRED_HEALTH_TIMEOUT_MS: '10000',
  ALFRED_DISTILL_WAIT_MS: '20000',
} as const;
