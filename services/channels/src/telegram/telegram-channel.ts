import type { Bot } from 'grammy';
import type { Bus } from '#bus';
import type { Logger } from '#logging';
import { retry } from '#retry';
import { AccessList } from '../chat/access.js';
import { installBotHandlers } from '../chat/bot-handlers.js';
import { BOT_COMMANDS, Commands } from '../chat/commands.js';
import { Confirmations } from '../chat/confirmations.js';
import { Conversations } from '../chat/conversations.js';
import { TurnRelay } from '../chat/turn-relay.js';
import type { ChannelStore } from '../store/channel.store.js';
import { botIdOf, webhookSecretOf, type TelegramConfig } from './bot-identity.js';
import { createBot, createPollingApi, describeTelegramError } from './telegram-client.js';
import { ALLOWED_UPDATES } from './update-chat.js';
import { UpdateIntake, updateQueue } from './update-intake.js';
import { UpdatePoller } from './update-poller.js';
import { UpdateWorker } from './update-worker.js';

/** The path the gateway serves Telegram's webhook calls on. */
export const webhookPath = (tenant: string) => `/channels/telegram/${encodeURIComponent(tenant)}/webhook`;

/** Waits between attempts to connect: 1 s doubling to 30 s, jittered. */
const CONNECT_BACKOFF = { baseMs: 1_000, maxMs: 30_000 };

/**
 * One Telegram bot connected to the agents: receives updates (long polling, or webhook calls forwarded by the
 * gateway), stores each on the durable queue before Telegram is told it arrived, and handles them from there.
 * Connecting to Telegram happens in the background and is retried, so Alfred starts while Telegram is away.
 */
export class TelegramChannel {
  readonly bot: Bot;
  readonly intake: UpdateIntake;
  private readonly worker: UpdateWorker;
  private poller?: UpdatePoller;
  private connecting?: Promise<void>;
  private connected = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly config: TelegramConfig,
    bus: Bus,
    private readonly store: ChannelStore,
    private readonly logger: Logger,
  ) {
    const token = config.TELEGRAM_BOT_TOKEN;
    const botId = botIdOf(token);
    this.bot = createBot(config);
    const queue = updateQueue(bus, config.ALFRED_CHANNELS_ACK_WAIT_MS);
    this.intake = new UpdateIntake(queue, botId);
    this.worker = new UpdateWorker(
      this.bot,
      queue,
      store,
      { concurrency: config.ALFRED_CHANNELS_CONCURRENCY, token },
      logger,
    );
    const conversations = new Conversations(bus, store, config.ALFRED_TELEGRAM_TENANT, botId);
    const access = new AccessList(config.ALFRED_TELEGRAM_ALLOW ?? new Map(), config.ALFRED_TELEGRAM_DEFAULT_AGENT);
    const confirmations = new Confirmations(bus, this.bot.api, conversations);
    const relay = new TurnRelay(
      bus,
      this.bot.api,
      store,
      conversations,
      confirmations,
      {
        editIntervalMs: config.ALFRED_TELEGRAM_EDIT_INTERVAL_MS,
        firstMessageMs: config.ALFRED_TELEGRAM_FIRST_MESSAGE_MS,
      },
      logger,
    );
    installBotHandlers(this.bot, {
      access,
      conversations,
      confirmations,
      relay,
      commands: new Commands(bus, conversations, access),
      jobOf: this.worker.jobOf,
    });
  }

  get ready(): boolean {
    return this.connected;
  }

  /** The secret Telegram sends with webhook calls. */
  get webhookSecret(): string {
    return webhookSecretOf(this.config.TELEGRAM_BOT_TOKEN);
  }

  start(): void {
    if (!this.config.ALFRED_TELEGRAM_ALLOW?.size) {
      this.logger.warn(
        'ALFRED_TELEGRAM_ALLOW is empty: the bot answers everyone with their own user id only; add ids as agent:id,id',
      );
    }
    this.connecting = this.connect();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping.abort();
    await this.connecting;
    await this.poller?.stop();
    await this.worker.stop(graceMs);
  }

  private async connect(): Promise<void> {
    const signal = this.stopping.signal;
    let working = false;
    const connectOnce = async () => {
      if (!this.bot.isInited()) await this.bot.init();
      // Telegram's command menu (the "/" button) lists these; without it a user must know them by heart.
      await this.bot.api.setMyCommands(
        BOT_COMMANDS.map(({ command, description }) => ({ command, description: description.slice(0, 256) })),
      );
      if (!working) await this.worker.start();
      working = true;
      await this.receive();
      this.connected = true;
      this.logger.info(
        { bot: this.bot.botInfo.username, mode: this.config.ALFRED_TELEGRAM_WEBHOOK_URL ? 'webhook' : 'long polling' },
        'Telegram channel connected',
      );
    };
    await retry(connectOnce, {
      attempts: Infinity,
      backoff: CONNECT_BACKOFF,
      signal,
      onRetry: (err, _attempt, retryInMs) =>
        this.logger.warn(
          { err: describeTelegramError(err, this.config.TELEGRAM_BOT_TOKEN), retryInMs },
          'could not connect to Telegram; retrying',
        ),
    }).catch((err: unknown) => {
      // Stopped while connecting: nothing to report.
      if (!signal.aborted) throw err;
    });
  }

  /** Webhook behind the gateway when a public URL is set; otherwise long polling (which needs the webhook removed). */
  private async receive(): Promise<void> {
    const base = this.config.ALFRED_TELEGRAM_WEBHOOK_URL;
    if (base) {
      const url = `${base.replace(/\/+$/, '')}${webhookPath(this.config.ALFRED_TELEGRAM_TENANT)}`;
      await this.bot.api.setWebhook(url, { secret_token: this.webhookSecret, allowed_updates: [...ALLOWED_UPDATES] });
      return;
    }
    // Pending updates stay with Telegram: they are fetched by the poller like any other.
    await this.bot.api.deleteWebhook({ drop_pending_updates: false });
    const api = createPollingApi(this.config);
    this.poller = new UpdatePoller(
      api,
      this.intake,
      this.store,
      { timeoutS: this.config.ALFRED_TELEGRAM_POLL_TIMEOUT_S, token: this.config.TELEGRAM_BOT_TOKEN },
      this.logger,
    );
    this.poller.start();
  }
}
