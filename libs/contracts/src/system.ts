import { z } from 'zod';
import { ServiceHealth } from './common.js';
import { route, ServiceName } from './route.js';

/** Every service answers its own health subject. */
export const healthRoute = (service: ServiceName) => route(service, 'health', z.object({}), ServiceHealth, { global: true });

export const ApiInfo = z.object({
  name: z.string(),
  version: z.string(),
  endpoints: z.array(z.object({ path: z.string(), methods: z.array(z.string()), description: z.string() })),
});
