import { pointId, sparseDoc, sparseQuery, toFilter } from './qdrant-mapping.js';

describe('qdrant mapping', () => {
  describe(pointId.name, () => {
    it('should give a stable v5-style UUID that differs per scope', () => {
      const id = pointId({ tenant: 't', agent: 'a' }, "x' OR 1=1");
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(pointId({ tenant: 't', agent: 'a' }, "x' OR 1=1")).toBe(id);
      expect(pointId({ tenant: 't2', agent: 'a' }, "x' OR 1=1")).not.toBe(id);
      expect(pointId({ tenant: 't', agent: 'a"' }, 'b')).not.toBe(pointId({ tenant: 't', agent: 'a' }, '"b'));
    });
  });

  describe(sparseDoc.name, () => {
    it('should weight repeated terms with BM25 saturation and share term ids with queries', () => {
      const doc = sparseDoc('Zebra zebra zebras run');
      const query = sparseQuery('zebra');
      expect(doc.indices).toHaveLength(2);
      expect(doc.indices).toContain(query.indices[0]);
      const weight = doc.values[doc.indices.indexOf(query.indices[0]!)]!;
      expect(weight).toBeCloseTo((3 * 2.2) / (3 + 1.2));
      expect(query.values).toEqual([1]);
      expect(sparseQuery(' ?! ').indices).toEqual([]);
    });
  });

  describe(toFilter.name, () => {
    it('should require the scope and map each condition', () => {
      const spec = {
        name: 'm',
        embedderId: 'e',
        dimension: 2,
        fields: { tags: 'string[]', importance: 'number', pinned: 'boolean' },
      } as const;
      const filter = toFilter(spec, {
        tenant: 't',
        agent: 'a',
        where: [
          { field: 'tags', op: 'contains', value: "a'b" },
          { field: 'importance', op: 'eq', value: 0.5 },
          { field: 'importance', op: 'gte', value: 0.1 },
          { field: 'pinned', op: 'eq', value: true },
        ],
      });
      expect(filter).toEqual({
        must: [
          { key: 'tenant', match: { value: 't' } },
          { key: 'agent', match: { value: 'a' } },
          { key: 'f_tags', match: { value: "a'b" } },
          { key: 'f_importance', range: { gte: 0.5, lte: 0.5 } },
          { key: 'f_importance', range: { gte: 0.1 } },
          { key: 'f_pinned', match: { value: true } },
        ],
      });
      expect(() =>
        toFilter(spec, { tenant: 't', agent: 'a', where: [{ field: 'tags', op: 'eq', value: 'x' }] }),
      ).toThrow(/not supported/);
    });
  });
});
