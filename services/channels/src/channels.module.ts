import { join } from 'node:path';
import {
  Inject,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ServiceName } from '#contracts';
import { BUS, type Bus } from '#bus';
import { FileKvStore } from '#files';
import { MemoryKvStore, moveEarlierData } from '#kv';
import { createRedis, RedisKvStore } from '#redis';
import { LOGGER, type Logger } from '#logging';
import type { ServiceDefinition } from '#runtime';
import { CHANNEL_STORE, CHANNELS_GRACE_MS, CHANNELS_TENANT, TELEGRAM_CHANNEL } from './channels.tokens.js';
import { channelsEnvSchema, loadChannelsConfig, type ChannelsConfig } from './config.js';
import { WebhookHandlers } from './handlers/webhook.handlers.js';
import { UPDATE_RETENTION_MS, type ChannelStore } from './store/channel.store.js';
import { moveFileChannels, moveRedisChannels } from './store/channel.migration.js';
import { KvChannelStore } from './store/kv-channel.store.js';
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
    else
      this.logger.info(
        'Telegram is off: set TELEGRAM_BOT_TOKEN (and ALFRED_TELEGRAM_ALLOW) to talk to your agents from Telegram',
      );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.channel?.stop(this.graceMs);
    await this.store?.close();
  }
}

/**
 * A bot's state on the key-value port: Redis when REDIS_URL is set, else files under the data dir (the poller lease
 * in the process's memory there). What an earlier version kept in its own layout is moved in first.
 */
async function channelStore(config: ChannelsConfig, bot: string, log: Logger): Promise<ChannelStore> {
  const ttlMs = UPDATE_RETENTION_MS;
  if (!config.REDIS_URL) {
    const kv = new FileKvStore(join(config.ALFRED_DATA_DIR, 'kv', 'channels'), { ttlMs });
    await moveEarlierData(log, 'channel state', () => moveFileChannels(config.ALFRED_DATA_DIR, bot, kv, ttlMs));
    return new KvChannelStore(kv, new MemoryKvStore(), bot);
  }
  const keyPrefix = config.ALFRED_REDIS_PREFIX;
  const kv = new RedisKvStore(config.REDIS_URL, 'channels', { keyPrefix });
  const redis = createRedis(config.REDIS_URL, 'channels-migration');
  await moveEarlierData(log, 'channel state', () => moveRedisChannels(redis, keyPrefix, bot, kv));
  await redis.quit().catch(() => redis.disconnect());
  return new KvChannelStore(kv, kv, bot);
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
          inject: [LOGGER],
          useFactory: (logger: Logger): Promise<ChannelStore | undefined> =>
            botId ? channelStore(config, botId, logger) : Promise.resolve(undefined),
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
