import type { Collection, StoredDoc, VectorStore } from './vector-store.js';

/**
 * Moves every document of a collection an earlier version kept out of the vector store (`move` stores one where it now
 * lives), then drops the collection: last, so a move interrupted half-way is finished by the next start. Returns how
 * many documents were moved.
 */
export async function retireCollection(
  store: VectorStore,
  collection: Collection,
  move: (doc: StoredDoc) => Promise<void>,
): Promise<number> {
  let moved = 0;
  for await (const page of collection.scanAll(500)) {
    for (const doc of page) {
      await move(doc);
      moved++;
    }
  }
  await store.drop(collection.spec.name);
  return moved;
}
