import { describeWithNats, describeWithRedis } from '#testing';
import { capabilitiesSuite } from './capabilities.suite.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

describeNats('capabilities API (distributed: NATS + Redis)', () => {
  describeRedis('with sessions, agent files and jobs in Redis', () => capabilitiesSuite('nats'));
});
