export * from './vector-store.js';
export * from './fusion.js';
export * from './sql.js';
export * from './collection-spec.js';
export * from './lancedb.store.js';
export { LanceDbCollection, DEFAULT_LANCEDB_TUNING, type LanceDbTuning } from './lancedb.collection.js';
export * from './qdrant.store.js';
export { QdrantCollection } from './qdrant.collection.js';
export { pointId, sparseDoc, sparseQuery } from './qdrant-mapping.js';
