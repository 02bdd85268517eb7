import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SessionRoutes } from '#contracts';
import { BUS, currentRequest, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { BusHandlers } from '#runtime';
import type { SessionStore } from '#sessions';
import { AgentService } from '../agents/agent.service.js';

export const SESSION_STORE = Symbol('SESSION_STORE');

/**
 * Sessions on the bus: agent-runtime owns them (the compactor and the distiller reach them through these routes), and
 * every instance serves any session (state lives in the store). A session is created only for an existing agent.
 */
@Injectable()
export class SessionHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(SESSION_STORE) private readonly store: SessionStore,
    @Inject(AgentService) private readonly agents: AgentService,
  ) {
    super(bus);
  }

  protected register(): void {
    const s = this.store;
    this.handle(SessionRoutes.create, async (p) => {
      await this.agents.get(p.scope);
      // With an Idempotency-Key, a retry after a lost answer finds the session it created instead of making another.
      const key = currentRequest()?.idempotencyKey;
      return s.create(p.scope, { metadata: p.metadata, ...(key ? { id: keyedSessionId(p.scope, key) } : {}) });
    });
    this.handle(SessionRoutes.get, (p) => s.get(p.scope, p.id));
    this.handle(SessionRoutes.append, (p) => s.append(p.scope, p.id, p.messages));
    this.handle(SessionRoutes.replace, async (p) => ({
      version: await s.replace(p.scope, p.id, {
        messages: p.messages,
        expectedVersion: p.expected_version,
        tokens: p.tokens,
      }),
    }));
    this.handle(SessionRoutes.list, (p) => s.list(p.scope, { limit: p.limit, offset: p.offset }));
    this.handle(SessionRoutes.delete, async (p) => {
      if (!(await s.delete(p.scope, p.id))) throw AlfredError.notFound('session', p.id);
      return { id: p.id, deleted: true as const };
    });
    this.handle(SessionRoutes.locate, async (p) => {
      const agent = await s.locate(p.tenant, p.id);
      if (!agent) throw AlfredError.notFound('session', p.id);
      return { agent };
    });
  }
}

/** A session id that the same Idempotency-Key and scope always give. */
function keyedSessionId(scope: { tenant: string; agent: string }, key: string): string {
  return createHash('sha256').update(`${scope.tenant}\n${scope.agent}\n${key}`).digest('hex').slice(0, 32);
}
