export * from './vector-store.js';
export * from './fusion.js';
export * from './sql.js';
export * from './collection-spec.js';
export * from './lancedb.store.js';
export { LanceDbCollection, DEFAULT_LANCEDB_TUNING, type LanceDbTuning } from './lancedb.collection.js';
