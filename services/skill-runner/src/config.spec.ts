import { ConfigError } from '#config';
import { loadSkillRunnerConfig, tenantShareOf } from './config.js';

describe(loadSkillRunnerConfig.name, () => {
  it('should read secrets as NAME=value pairs, keeping = inside values', () => {
    const config = loadSkillRunnerConfig({ ALFRED_SKILL_SECRETS: 'WEATHER_KEY=abc, TOKEN=x=y' });
    expect(config.ALFRED_SKILL_SECRETS).toEqual({ WEATHER_KEY: 'abc', TOKEN: 'x=y' });
  });

  it('should read secrets as a JSON object', () => {
    expect(loadSkillRunnerConfig({ ALFRED_SKILL_SECRETS: '{"API_KEY":"k,1"}' }).ALFRED_SKILL_SECRETS).toEqual({
      API_KEY: 'k,1',
    });
  });

  it('should default to no secrets and a warm pool', () => {
    expect(loadSkillRunnerConfig({})).toMatchObject({ ALFRED_SKILL_SECRETS: {}, ALFRED_SKILL_WARM_POOL: 4 });
  });

  it('should refuse names that are not UPPER_SNAKE_CASE and JSON that does not parse', () => {
    expect(() => loadSkillRunnerConfig({ ALFRED_SKILL_SECRETS: 'lower=1' })).toThrow(ConfigError);
    expect(() => loadSkillRunnerConfig({ ALFRED_SKILL_SECRETS: '{"A":' })).toThrow(/does not parse/);
  });
  it('should read which tenants get each secret', () => {
    expect(
      loadSkillRunnerConfig({ ALFRED_SKILL_SECRET_GRANTS: 'WEATHER_KEY=acme|globex, TOKEN=*' })
        .ALFRED_SKILL_SECRET_GRANTS,
    ).toEqual({ WEATHER_KEY: ['acme', 'globex'], TOKEN: '*' });
    expect(() => loadSkillRunnerConfig({ ALFRED_SKILL_SECRET_GRANTS: 'lower=acme' })).toThrow(ConfigError);
  });

  it("should give one tenant half the runner's slots by default, or what the operator says", () => {
    expect(tenantShareOf(loadSkillRunnerConfig({}))).toBe(4);
    expect(tenantShareOf(loadSkillRunnerConfig({ ALFRED_SKILL_CONCURRENCY: '1' }))).toBe(1);
    expect(tenantShareOf(loadSkillRunnerConfig({ ALFRED_SKILL_CONCURRENCY: '5' }))).toBe(3);
    expect(
      tenantShareOf(loadSkillRunnerConfig({ ALFRED_SKILL_CONCURRENCY: '4', ALFRED_SKILL_TENANT_CONCURRENCY: '9' })),
    ).toBe(4);
  });
});
