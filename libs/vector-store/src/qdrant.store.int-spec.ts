import { randomUUID } from 'node:crypto';
import { describeWithQdrant, testServers } from '#testing';
import { QdrantStore } from './qdrant.store.js';
import { vectorStoreContract } from './vector-store.contract.js';

const describeQdrant = await describeWithQdrant();

vectorStoreContract(describeQdrant, QdrantStore.name, async () => {
  const prefix = `alfred_test_${randomUUID().slice(0, 8)}_`;
  const options = { url: testServers.qdrantUrl!, apiKey: process.env.QDRANT_API_KEY, prefix };
  return {
    create: () => Promise.resolve(new QdrantStore(options)),
    cleanup: async () => {
      const { QdrantClient } = await import('@qdrant/js-client-rest');
      const client = new QdrantClient({ url: options.url, apiKey: options.apiKey, checkCompatibility: false });
      const { collections } = await client.getCollections();
      for (const c of collections.filter((c) => c.name.startsWith(prefix))) await client.deleteCollection(c.name);
    },
  };
});
