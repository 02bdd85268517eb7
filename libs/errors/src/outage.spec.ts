import { AlfredError } from './alfred-error.js';
import { classifyOutage, dependencyUnavailable, registerOutageClassifier } from './outage.js';

describe(dependencyUnavailable.name, () => {
  it('should be a 503 naming the dependency with a retry hint', () => {
    const err = dependencyUnavailable('NATS', 'request x');
    expect(err.status).toBe(503);
    expect(err.details).toMatchObject({ dependency: 'NATS', retryAfterSeconds: expect.any(Number) });
  });
});

describe(classifyOutage.name, () => {
  it('should answer with the 503 of the classifier that claims the error, and nothing for other errors', () => {
    class LinkDown extends Error {}
    registerOutageClassifier((err, subject) =>
      err instanceof LinkDown ? dependencyUnavailable('Link', `serve ${subject}`) : undefined,
    );
    const outage = classifyOutage(new LinkDown('gone'), 'alfred.x.v1');
    expect(outage).toBeInstanceOf(AlfredError);
    expect(outage?.message).toContain('Link is unavailable');
    expect(outage?.message).toContain('serve alfred.x.v1');
    expect(classifyOutage(new Error('boom'), 'alfred.x.v1')).toBeUndefined();
  });
});
