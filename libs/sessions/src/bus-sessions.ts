import { SessionRoutes, type Scope, type SessionList, type SessionView } from '#contracts';
import { currentRequest, type Bus } from '#bus';
import type { ListSessionsOptions, ReplaceMessagesOptions, SessionStore } from './session-store.js';

/** What services other than agent-runtime do with sessions. */
export type SessionAccess = Pick<SessionStore, 'get' | 'replace' | 'list'>;

/**
 * Sessions as the services that do not own them reach them: over the bus from agent-runtime, which owns the session
 * store. Errors come back as they were raised there (NOT_FOUND, CONFLICT with its details); the request being handled
 * lends its correlation id and deadline.
 */
export class BusSessions implements SessionAccess {
  constructor(private readonly bus: Bus) {}

  get(scope: Scope, id: string): Promise<SessionView> {
    return this.bus.request(SessionRoutes.get, { scope, id }, { context: currentRequest() });
  }

  async replace(scope: Scope, id: string, options: ReplaceMessagesOptions): Promise<number> {
    const request = {
      scope,
      id,
      messages: [...options.messages],
      expected_version: options.expectedVersion,
      tokens: options.tokens,
    };
    return (await this.bus.request(SessionRoutes.replace, request, { context: currentRequest() })).version;
  }

  list(scope: Scope, options: ListSessionsOptions = {}): Promise<SessionList> {
    return this.bus.request(
      SessionRoutes.list,
      { scope, limit: options.limit ?? 20, offset: options.offset ?? 0 },
      { context: currentRequest() },
    );
  }
}
