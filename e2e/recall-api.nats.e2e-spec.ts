import { describeWithNats } from '#testing';
import { recallApiSuite } from './recall-api.suite.js';

const describeNats = await describeWithNats();

describeNats('feedback, checkpoints, remediations and recall (distributed: every service over NATS)', () =>
  recallApiSuite('nats'),
);
