import { describeWithNats } from '#testing';
import { memoryApiSuite } from './memory-api.suite.js';

const describeNats = await describeWithNats();

describeNats('memory API (distributed: every service over NATS)', () => memoryApiSuite('nats'));
