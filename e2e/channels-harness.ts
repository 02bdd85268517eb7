import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { TelegramLoopback, type LoopbackMessage, type TelegramLoopbackOptions, type TelegramUser } from '#testing';
import { startAgentSystem, type AgentSystem } from './agent-harness.js';
import type { Mode } from './harness.js';

export const ALICE: TelegramUser = { id: 4_242_001, is_bot: false, first_name: 'Alice', username: 'alice' };
export const BOB: TelegramUser = { id: 4_242_002, is_bot: false, first_name: 'Bob' };
export const MALLORY: TelegramUser = { id: 4_242_666, is_bot: false, first_name: 'Mallory' };

/** The settings every channel test uses: Alice may talk to alfred and jarvis, Bob to jarvis only. */
export function channelEnv(telegram: TelegramLoopback, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_URL: telegram.url,
    ALFRED_TELEGRAM_ALLOW: `alfred:${ALICE.id};jarvis:${ALICE.id},${BOB.id}`,
    ALFRED_TELEGRAM_POLL_TIMEOUT_S: '2',
    ALFRED_TELEGRAM_EDIT_INTERVAL_MS: '300',
    ALFRED_TELEGRAM_FIRST_MESSAGE_MS: '1000',
    ALFRED_TURN_HEARTBEAT_MS: '200',
    ...extra,
  };
}

export interface ChannelSystem extends AgentSystem {
  readonly telegram: TelegramLoopback;
}

/** Alfred with the loopback model and the loopback Bot API, the channels service long-polling it (or by webhook). */
export async function startChannelSystem(
  mode: Mode,
  extra: Record<string, string> = {},
  telegramOptions: TelegramLoopbackOptions = {},
): Promise<ChannelSystem> {
  const telegram = await TelegramLoopback.start(telegramOptions);
  const sys = await startAgentSystem(mode, channelEnv(telegram, extra));
  await telegram.waitFor(
    () => telegram.callsOf(extra.ALFRED_TELEGRAM_WEBHOOK_URL ? 'setWebhook' : 'getUpdates').length > 0,
    'the channel to connect',
  );
  return {
    ...sys,
    telegram,
    async stop() {
      await sys.stop();
      await telegram.close();
    },
  };
}

/** The bot's replies in a chat after the given message (exclusive). */
export function repliesAfter(telegram: TelegramLoopback, chatId: number, after: LoopbackMessage): LoopbackMessage[] {
  return telegram.botMessages(chatId).filter((m) => m.message_id > after.message_id);
}

/** Waits until the bot's reply to `sent` settles on text matching `expected` (its last version). */
export async function replyTo(
  telegram: TelegramLoopback,
  sent: LoopbackMessage,
  expected: RegExp,
  timeoutMs = 15_000,
): Promise<LoopbackMessage> {
  let found: LoopbackMessage | undefined;
  await telegram
    .waitFor(
      () => {
        found = repliesAfter(telegram, sent.chat.id, sent).find((m) => expected.test(m.text));
        return found !== undefined;
      },
      `a reply matching ${expected}`,
      timeoutMs,
    )
    .catch((err: unknown) => {
      if (process.env.DEBUG_CHANNELS)
        console.log(
          JSON.stringify(
            telegram.calls
              .slice(-12)
              .map((c) => [c.method, c.status, c.at, c.params.text ?? c.params.data ?? c.params.offset]),
          ),
          telegram
            .messages(sent.chat.id)
            .slice(-5)
            .map((m) => m.text),
        );
      throw err;
    });
  return found!;
}

/** A TLS-terminating reverse proxy on loopback, as a deployment puts in front of the gateway for Telegram's webhook. */
export interface TlsProxy {
  readonly url: string;
  /** The proxy's self-signed certificate (PEM), for the loopback Bot API to trust. */
  readonly ca: string;
  close(): Promise<void>;
}

/** Starts an https:// proxy on 127.0.0.1 that forwards every request to `target` (an http:// loopback origin). */
export async function startTlsProxy(target: string): Promise<TlsProxy> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: pems.cert,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
