import { z } from 'zod';
import { ServiceHealth } from './common.js';
import { route, ServiceName } from './route.js';

/** Every service answers its own health subject. */
export const healthRoute = (service: ServiceName) =>
  route(service, 'health', z.object({}), ServiceHealth, { global: true });

export const ApiInfo = z.object({
  name: z.string(),
  version: z.string(),
  endpoints: z.array(z.object({ path: z.string(), methods: z.array(z.string()), description: z.string() })),
});

/** One step of GET /metrics/history: what the gateway answered in it. */
export const MetricsHistoryPoint = z.object({
  /** The end of the step. */
  at: z.string(),
  requests: z.number().min(0),
  /** Answers with a 5xx status. */
  errors: z.number().min(0),
  rate_per_s: z.number().min(0),
  error_rate_per_s: z.number().min(0),
  /** Null when the step had no request. */
  mean_ms: z.number().min(0).nullable(),
  p95_ms: z.number().min(0).nullable(),
});
export type MetricsHistoryPoint = z.infer<typeof MetricsHistoryPoint>;

/** GET /metrics/history: this gateway's last hour of requests, errors and latency, oldest first. */
export const MetricsHistory = z.object({
  step_seconds: z.number().positive(),
  window_seconds: z.number().positive(),
  points: z.array(MetricsHistoryPoint),
});
export type MetricsHistory = z.infer<typeof MetricsHistory>;
