import { withoutSecrets } from './distiller.service.js';

describe(withoutSecrets.name, () => {
  it('should redact a credential in a derived insight and leave clean ones as they are', async () => {
    const token = `ghp_${'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5'}`;
    const out = await withoutSecrets([
      { text: `The deploy bot uses ${token}`, importance: 0.6, support: 2 },
      { text: 'The user prefers short answers', importance: 0.5, support: 3 },
    ]);
    expect(out[0]!.text).toBe('The deploy bot uses [REDACTED:GITHUB_TOKEN]');
    expect(out[1]!.text).toBe('The user prefers short answers');
  });
});
