import { SkillRunner } from '#sandbox';

/** Whether this machine can start the OS sandbox (bubblewrap); tests decide what to run from it. */
export const OS_SANDBOX = await SkillRunner.osStatus({});

/**
 * The mode sandbox tests run in: the OS layer where bubblewrap works; elsewhere Node's layer alone (the attack
 * suites still test it) — except under CI=true, where a missing sandbox must fail the run instead.
 */
export const SANDBOX_MODE: 'required' | 'unsafe-off' =
  OS_SANDBOX.available || process.env.CI === 'true' ? 'required' : 'unsafe-off';

/**
 * `describe` for suites that need the OS sandbox: skipped with a printed reason when it cannot start (not under CI).
 */
export function describeOsSandbox(name: string, fn: () => void): void {
  if (SANDBOX_MODE === 'required') {
    describe(name, fn);
    return;
  }
  console.warn(`skipping "${name}": ${OS_SANDBOX.reason}. Install bubblewrap (apt-get install bubblewrap) to run it.`);
  describe.skip(name, fn);
}
