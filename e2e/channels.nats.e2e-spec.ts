import { describeWithNats, describeWithRedis } from '#testing';
import { channelsSuite } from './channels.suite.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

describeNats('Telegram channel (distributed: NATS + Redis)', () => {
  describeRedis('with the channel state in Redis', () => channelsSuite('nats'));
});
