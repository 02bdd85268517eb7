import { Inject, Injectable } from '@nestjs/common';
import { CompactorRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { CompactorService } from '../compactor.service.js';

/** Compaction on the bus. */
@Injectable()
export class CompactorHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly compactor: CompactorService,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(CompactorRoutes.compact, (p) =>
      this.compactor.compact(p.scope, {
        sessionId: p.session_id,
        instructions: p.instructions,
        preserveRecent: p.preserve_recent,
        targetTokens: p.target_tokens,
      }),
    );
  }
}
