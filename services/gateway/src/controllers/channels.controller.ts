import { Body, Controller, Headers, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ChannelRoutes, TELEGRAM_SECRET_HEADER, TelegramUpdate, TenantId } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/**
 * Webhook calls from Telegram, forwarded to the channels service over the bus. 200 only once the update is stored on
 * the channels queue; any failure makes Telegram deliver it again later.
 */
@Controller('channels')
export class ChannelsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post('telegram/:tenant/webhook')
  @HttpCode(200)
  async telegram(
    @CallerParam() c: Caller,
    @Param('tenant') tenant: string,
    @Headers(TELEGRAM_SECRET_HEADER) secret: string | undefined,
    @Body() body: unknown,
  ) {
    if (!TenantId.safeParse(tenant).success) throw AlfredError.notFound('channel', tenant);
    const update = parseInput(TelegramUpdate, body ?? {});
    return this.bus.request(
      ChannelRoutes.telegramWebhook,
      { tenant, secret_token: secret ?? '', update },
      { context: c.context },
    );
  }
}
