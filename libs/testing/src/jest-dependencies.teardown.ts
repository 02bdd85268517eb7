import type { ContainerDependency } from './test-dependencies.js';

/**
 * jest's globalTeardown for the int and e2e projects: stops what test-dependencies.ts started.
 * @public (named in jest.config.js)
 */
export default async function teardown(): Promise<void> {
  const running = (globalThis as { alfredTestContainers?: ContainerDependency[] }).alfredTestContainers ?? [];
  await Promise.all(running.map((c) => c.stop()));
}
