import { randomBytes } from 'node:crypto';
import { ErrorCode } from '#contracts';
import { redactSecrets, scanSecrets } from './secret-scanner.js';
import { SecretDetectedError, SecretGuard } from './secret-guard.js';

const b64 = (n: number) => randomBytes(n).toString('base64');
/** A PEM body as real keys start: DER's SEQUENCE ("MII…") or OpenSSH's magic. */
const pem = (magic: string, n: number) => magic + b64(n).replace(/[^A-Za-z0-9+/]/g, 'A');
const alnum = (n: number) =>
  randomBytes(n * 2)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, n)
    .padEnd(n, 'q');

/** Realistic credentials of each rule family (random bodies in the real formats), each in a sentence. */
const SECRETS: Array<[family: string, text: string, kind: RegExp]> = [
  ['cloud: AWS secret key', `deploy with aws_secret_access_key = ${alnum(30)}/${alnum(9)} please`, /AWS/],
  [
    'cloud: GCP service account',
    `{"type": "service_account", "project_id": "p1", "private_key_id": "${alnum(40)}", "private_key": ` +
      `"-----BEGIN PRIVATE KEY-----\\n${pem('MIIEvQIBADANBg', 120)}\\n-----END PRIVATE KEY-----\\n", ` +
      `"client_email": "a@p1.iam.gserviceaccount.com"}`,
    /GCP|PrivateKey|PRIVATE/i,
  ],
  [
    'private key: RSA PEM',
    `key:\n-----BEGIN RSA PRIVATE KEY-----\n${pem('MIIEpAIBAAKCAQEA', 180)}\n-----END RSA PRIVATE KEY-----`,
    /Private/i,
  ],
  [
    'private key: OpenSSH',
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${pem('b3BlbnNzaC1rZXktdjE', 200)}\n-----END OPENSSH PRIVATE KEY-----`,
    /Private/i,
  ],
  ['token: GitHub', `use ghp_${alnum(36)} for the bot`, /GITHUB/],
  ['token: GitLab', `glpat-${alnum(20)} is the deploy token`, /GITLAB|GitLab/i],
  ['token: Slack', `xoxb-${'123456789012'}-${'1234567890123'}-${alnum(24)}`, /SLACK/],
  ['token: Stripe', `stripe key sk_live_${alnum(32)}`, /STRIPE/],
  ['token: npm', `//registry.npmjs.org/:_authToken=npm_${alnum(36)}`, /NPM/],
  ['token: OpenAI', `OPENAI_API_KEY=sk-proj-${alnum(74)}T3BlbkFJ${alnum(74)}`, /OPENAI/i],
  ['token: Anthropic', `ANTHROPIC_API_KEY=sk-ant-api03-${alnum(93)}AA`, /ANTHROPIC/],
  ['token: SendGrid', `SG.${alnum(22)}.${alnum(43)}`, /SENDGRID|SendGrid/i],
  ['connection string: PostgreSQL', `DATABASE_URL=postgres://app:${alnum(16)}@db.internal:5432/prod`, /Postgre/i],
  ['connection string: MongoDB', `mongodb+srv://admin:${alnum(14)}@cluster0.ab1cd.mongodb.net/app`, /Mongo/i],
  ['connection string: MySQL', `mysql://root:${alnum(12)}@10.0.0.5:3306/shop`, /MySQL/i],
  ['password in URL: https basic auth', `curl https://deploy:${alnum(12)}@git.example.com/repo.git`, /Basic|Password/i],
  ['password in URL: redis', `cache at redis://:${alnum(16)}@cache.internal:6379/0`, /Password|Redis/i],
  ['password in URL: amqp', `amqp://worker:${alnum(12)}@mq.internal:5672/vhost`, /Password|AMQP/i],
];

/** Things that look like secrets and are not: they must pass untouched. */
const LOOK_ALIKES: Array<[what: string, text: string]> = [
  ['UUIDs', 'memory 550e8400-e29b-41d4-a716-446655440000 follows 6ba7b810-9dad-11d1-80b4-00c04fd430c8'],
  [
    'hashes',
    'sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, commit ' +
      '3f786850e387550fdab836ed7e6dc881de23001b, md5 d41d8cd98f00b204e9800998ecf8427e',
  ],
  ['a base64 image', `logo: data:image/png;base64,${b64(600)}`],
  [
    'URLs without passwords',
    'see https://user@example.com/docs and postgres://localhost:5432/dev and https://example.com/a:b@c',
  ],
  [
    'talk about passwords',
    'The password policy requires 12 characters; the API key is kept in the vault under prod/stripe.',
  ],
  ['an example placeholder', 'set OPENAI_API_KEY=<your key here> and GITHUB_TOKEN=$GITHUB_TOKEN'],
  ['a long random id', `request id ${randomBytes(20).toString('hex')} failed`],
];

describe(scanSecrets.name, () => {
  it.each(SECRETS)('should find %s', async (_family, text, kind) => {
    const findings = await scanSecrets(text);
    expect(findings.length).toBeGreaterThan(0);
    expect(`${findings[0]!.rule} ${findings[0]!.kind}`).toMatch(kind);
  });

  it.each(LOOK_ALIKES)('should pass %s', async (_what, text) => {
    expect(await scanSecrets(text)).toEqual([]);
  });

  it('should find the same, at the same positions, in many texts scanned together as in each alone', async () => {
    const texts = [...SECRETS.map(([, t]) => t), ...LOOK_ALIKES.map(([, t]) => t)];
    // A private key split over two texts is a secret in neither: joined scanning must not see one across them.
    texts.push('-----BEGIN RSA PRIVATE KEY-----', `${pem('MIIEpAIBAAKCAQEA', 180)}\n-----END RSA PRIVATE KEY-----`);
    const alone: unknown[] = [];
    for (const t of texts) alone.push(await scanSecrets(t));
    const together = await Promise.all(texts.map((t) => scanSecrets(t)));
    expect(together).toEqual(alone);
    expect(together.slice(-2)).toEqual([[], expect.any(Array)]);
  });

  it('should give the position as offsets, line and column', async () => {
    const key = `ghp_${alnum(36)}`;
    const text = `first line\nsecond: ${key} end`;
    const [f] = await scanSecrets(text);
    expect(text.slice(f!.start, f!.end)).toContain(key);
    expect(f!.line).toBe(2);
    expect(f!.column).toBe(text.indexOf(key) - text.indexOf('\n'));
  });
});

describe(redactSecrets.name, () => {
  it('should replace each secret and keep the rest', async () => {
    const key = `ghp_${alnum(36)}`;
    const text = `token ${key} for the bot`;
    const out = redactSecrets(text, await scanSecrets(text));
    expect(out).not.toContain(key);
    expect(out).toMatch(/^token \[REDACTED:GITHUB_TOKEN\] for the bot$/);
  });
});

describe(SecretGuard.name, () => {
  const key = `sk_live_${alnum(32)}`;

  it('should refuse with SECRET_DETECTED naming rule and position, never the secret', async () => {
    const err = await new SecretGuard().admit('t1', `stripe ${key}`, { index: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretDetectedError);
    const body = (err as SecretDetectedError).toBody();
    expect(body.error.code).toBe(ErrorCode.SecretDetected);
    expect((err as SecretDetectedError).status).toBe(422);
    expect(body.error.message).toMatch(/item 3: .*stripe.*line 1, column 8/i);
    expect(JSON.stringify(body)).not.toContain(key.slice(8));
  });

  it('should redact for a tenant that chose redaction and refuse for the others', async () => {
    const guard = new SecretGuard(['redacting']);
    expect(await guard.admit('redacting', `stripe ${key}`)).toMatch(/^stripe \[REDACTED:/);
    await expect(guard.admit('other', `stripe ${key}`)).rejects.toBeInstanceOf(SecretDetectedError);
  });

  it('should pass clean text unchanged', async () => {
    expect(await new SecretGuard().admit('t1', 'User prefers tea')).toBe('User prefers tea');
  });
});

describe('secretlint profiling', () => {
  it('should leave no performance marks behind a scan (they would pile up with every write)', async () => {
    performance.clearMarks();
    await scanSecrets(`use ghp_${alnum(36)} for the bot`);
    expect(performance.getEntriesByType('mark')).toEqual([]);
  });
});
