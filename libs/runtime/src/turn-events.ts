import type { TurnEvent } from '#contracts';
import type { TopicSubscription } from '#bus';

/** Until the worker's `started` event says how often it beats, wait this long for it. */
export const FIRST_TURN_EVENT_MS = 15_000;

/**
 * A turn's events as they come, ending with `done`; a worker that stops beating (killed mid-turn) ends the
 * stream with a TURN_LOST error and a failed `done`. Closes the subscription when the stream ends.
 * `firstEventMs` bounds the wait for the first event (an attached listener may have missed `started`).
 */
export async function* followTurn(
  events: TopicSubscription<TurnEvent>,
  turnId: string,
  firstEventMs = FIRST_TURN_EVENT_MS,
): AsyncGenerator<TurnEvent> {
  let idleMs = firstEventMs;
  try {
    for (;;) {
      const event = await events.next(idleMs);
      if (event === undefined) {
        yield {
          type: 'error',
          error: {
            code: TURN_LOST,
            message:
              `the worker running turn ${turnId} stopped answering; the turn failed and wrote nothing ` +
              `after its last finished round`,
          },
        };
        yield { type: 'done', turn_id: turnId, status: 'failed', rounds: 0 };
        return;
      }
      if (event.type === 'started') idleMs = event.heartbeat_ms * 3 + 1_000;
      yield event;
      if (event.type === 'done') return;
    }
  } finally {
    events.close();
  }
}

/** The error code of a turn whose worker went silent. */
export const TURN_LOST = 'TURN_LOST';
