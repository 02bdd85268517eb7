import { OS_SANDBOX_FIX, OsSandbox } from './os-sandbox.js';

interface AnnounceLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Says at start-up, plainly, whether `what` (executable skills, the agent's bash) runs inside the OS sandbox, is
 * off because the sandbox cannot start here or cannot use `folder` (and how to turn it on), or runs without it by the
 * operator's choice. Every run refuses with the same reason until the cause is fixed and the service restarted.
 */
export async function announceOsSandbox(
  logger: AnnounceLogger,
  what: string,
  mode: 'required' | 'unsafe-off',
  bwrapPath?: string,
  folder?: string,
): Promise<boolean> {
  if (mode === 'unsafe-off') {
    logger.error(
      { osSandbox: 'unsafe-off' },
      `UNSAFE: ${what} run WITHOUT the OS sandbox (ALFRED_OS_SANDBOX=unsafe-off). Untrusted code is ` +
        `contained only by Node's permission model (skills) or not at all (bash). Remove ALFRED_OS_SANDBOX ` +
        `to require the sandbox.`,
    );
    return true;
  }
  const status = await OsSandbox.probe(bwrapPath, folder);
  if (status.available) {
    logger.info({ osSandbox: 'bubblewrap' }, `${what} run inside the OS sandbox (bubblewrap)`);
    return true;
  }
  logger.error(
    { osSandbox: 'unavailable', reason: status.reason },
    `${what} are OFF: ${status.reason}. To turn them on: ${OS_SANDBOX_FIX}`,
  );
  return false;
}
