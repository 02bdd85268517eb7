import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ChannelRoutes, ErrorCode } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { BusHandlers } from '#runtime';
import { CHANNELS_TENANT, TELEGRAM_CHANNEL } from '../channels.tokens.js';
import type { TelegramChannel } from '../telegram/telegram-channel.js';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Webhook updates the gateway forwards: checked (tenant and secret), stored on the queue, then answered. */
@Injectable()
export class WebhookHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(TELEGRAM_CHANNEL) private readonly channel: TelegramChannel | undefined,
    @Inject(CHANNELS_TENANT) private readonly tenant: string,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(ChannelRoutes.telegramWebhook, async (p) => {
      const channel = this.channel;
      if (!channel) throw new AlfredError(ErrorCode.NotFound, 'Telegram is not configured on this deployment');
      // One answer for a wrong tenant and a wrong secret: the URL reveals nothing about which was wrong.
      if (p.tenant !== this.tenant || !sameSecret(p.secret_token, channel.webhookSecret)) {
        throw new AlfredError(ErrorCode.Unauthorized, 'the webhook secret does not match');
      }
      await channel.intake.accept(p.update);
      return { queued: true, update_id: p.update.update_id };
    });
  }
}
