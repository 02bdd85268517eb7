import type { Scope } from '#contracts';
import type { Collection } from '#vector-store';

const PAGE = 100;

/** Deletes every document of one tenant and agent from a collection, page by page; returns how many. */
export async function purgeScope(collection: Collection, scope: Scope, sortBy = 'created_at'): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { docs } = await collection.list({ ...scope, where: [] }, { sortBy, order: 'asc', limit: PAGE, offset: 0 });
    if (docs.length === 0) return deleted;
    const gone = await collection.delete(
      scope,
      docs.map((d) => d.id),
    );
    deleted += gone.length;
    if (gone.length === 0) return deleted;
  }
}
