import { Inject, Injectable } from '@nestjs/common';
import { CredentialRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { ScopedCredentials } from '../http/scoped-credential.js';

/**
 * Credentials for turns started off the HTTP API (chat channels): the same scoped credential the turns endpoint
 * mints, for the turn's own tenant, agent and session, so the agent's bash reaches the API there too.
 */
@Injectable()
export class CredentialHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(ScopedCredentials) private readonly credentials: ScopedCredentials,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(CredentialRoutes.mint, async (p) => ({
      credential: this.credentials.mint({
        tenant: p.scope.tenant,
        agent: p.scope.agent,
        session: p.session_id,
        turn: p.turn_id,
      }),
    }));
    this.handle(CredentialRoutes.revoke, async (p) => {
      // Only the tenant the credential was minted for may end it.
      if (this.credentials.scopeOf(p.credential)?.tenant !== p.scope.tenant) return { revoked: false };
      return { revoked: (await this.credentials.revoke(p.credential)) !== undefined };
    });
  }
}
