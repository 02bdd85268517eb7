import { Inject, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { ServiceName } from '#contracts';
import { BUS, type Bus } from '#bus';
import { LOGGER, type Logger } from '#logging';
import type { ServiceDefinition } from '#runtime';
import { CHANNEL_STORE, CHANNELS_GRACE_MS, CHANNELS_TENANT, TELEGRAM_CHANNEL } from './channels.tokens.js';
import { channelsEnvSchema, loadChannelsConfig, type ChannelsConfig } from './config.js';
import { WebhookHandlers } from './handlers/webhook.handlers.js';
import type { ChannelStore } from './store/channel.store.js';
import { FileChannelStore } from './store/file-channel.store.js';
import { RedisChannelStore } from './store/redis-channel.store.js';
import { botIdOf, type TelegramConfig } from './telegram/bot-identity.js';
import type { TelegramChannel } from './telegram/telegram-channel.js';

function telegramConfig(config: ChannelsConfig): TelegramConfig | undefined {
  return config.TELEGRAM_BOT_TOKEN ? (config as TelegramConfig) : undefined;
}

/** Starts the channel after the bus handlers are up, and stops it (draining running turns) before they go. */
class ChannelLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(TELEGRAM_CHANNEL) private readonly channel: TelegramChannel | undefined,
    @Inject(CHANNEL_STORE) private readonly store: ChannelStore | undefined,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CHANNELS_GRACE_MS) private readonly graceMs: number,
  ) {}

  onApplicationBootstrap(): void {
    if (this.channel) this.channel.start();
    else this.logger.info('Telegram is off: set TELEGRAM_BOT_TOKEN (and ALFRED_TELEGRAM_ALLOW) to talk to your agents from Telegram');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.channel?.stop(this.graceMs);
    await this.store?.close();
  }
}

/** The channels service: chat platforms connected to agents through the bus contracts (Telegram first). */
@Module({})
export class ChannelsModule {
  static forRoot(config: ChannelsConfig): DynamicModule {
    const telegram = telegramConfig(config);
    const botId = telegram ? botIdOf(telegram.TELEGRAM_BOT_TOKEN) : undefined;
    return {
      module: ChannelsModule,
      providers: [
        {
          provide: CHANNEL_STORE,
          useFactory: (): ChannelStore | undefined => {
            if (!botId) return undefined;
            return config.REDIS_URL ? new RedisChannelStore(config.REDIS_URL, config.ALFRED_REDIS_PREFIX, botId) : new FileChannelStore(config.ALFRED_DATA_DIR, botId);
          },
        },
        {
          provide: TELEGRAM_CHANNEL,
          inject: [BUS, CHANNEL_STORE, LOGGER],
          // Loaded only when configured: grammY and the Markdown renderer stay out of processes without a bot.
          useFactory: async (bus: Bus, store: ChannelStore | undefined, logger: Logger) => {
            if (!telegram || !store) return undefined;
            const { TelegramChannel } = await import('./telegram/telegram-channel.js');
            return new TelegramChannel(telegram, bus, store, logger.child({ context: TelegramChannel.name }));
          },
        },
        { provide: CHANNELS_TENANT, useValue: config.ALFRED_TELEGRAM_TENANT },
        // Half the shutdown deadline for running turns to finish; the rest for closing.
        { provide: CHANNELS_GRACE_MS, useValue: Math.floor(config.ALFRED_SHUTDOWN_DEADLINE_MS / 2) },
        ChannelLifecycle,
        WebhookHandlers,
      ],
    };
  }
}

export const channelsService: ServiceDefinition<ChannelsConfig> = {
  name: ServiceName.Channels,
  envSchema: channelsEnvSchema,
  loadConfig: loadChannelsConfig,
  module: (config) => ChannelsModule.forRoot(config),
  readiness: (app) => {
    const channel = app.get<TelegramChannel | undefined>(TELEGRAM_CHANNEL);
    return channel ? [{ name: 'telegram', check: () => channel.ready }] : [];
  },
};
