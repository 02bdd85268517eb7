import { GrammyError, HttpError } from 'grammy';
import { webhookSecretOf } from './bot-identity.js';
import { describeTelegramError } from './telegram-client.js';

const token = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw-';

describe(describeTelegramError.name, () => {
  it('should cut the token out of a network failure that names the URL', () => {
    const cause = new Error(`request to https://api.telegram.org/bot${token}/getUpdates failed, reason: ECONNRESET`);
    const described = JSON.stringify(
      describeTelegramError(new HttpError("Network request for 'getUpdates' failed!", cause), token),
    );
    expect(described).not.toContain(token.split(':')[1]);
    expect(described).toContain('/bot<token>/getUpdates');
  });

  it('should keep what helps: the method, the code and the description', () => {
    const err = new GrammyError(
      "Call to 'sendMessage' failed!",
      { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      'sendMessage',
      {},
    );
    expect(describeTelegramError(err, token)).toEqual({
      method: 'sendMessage',
      error_code: 403,
      description: 'Forbidden: bot was blocked by the user',
    });
  });
});

describe(webhookSecretOf.name, () => {
  it('should derive a stable secret Telegram accepts, which is not the token', () => {
    const secret = webhookSecretOf(token);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
    expect(secret).toBe(webhookSecretOf(token));
    expect(secret).not.toContain(token.split(':')[1]);
  });
});
