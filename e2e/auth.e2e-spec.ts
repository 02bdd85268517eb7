import { client, startSystem, type TestSystem } from './harness.js';

const KEY_A = 'tenant-a-key-0123456789';
const KEY_B = 'tenant-b-key-0123456789';

describe('API keys and tenants', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startSystem('embedded', { ALFRED_API_KEYS: `${KEY_A}=acme,${KEY_B}=globex` });
  });
  afterAll(async () => system?.stop());

  it('should answer 401 in the error format without a key', async () => {
    const res = await client(system.url).get('/memories');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('should answer 401 for a wrong key and create nothing', async () => {
    const bad = client(system.url, { authorization: 'Bearer not-a-valid-key-000000' });
    expect((await bad.post('/memories', { content: 'x' })).status).toBe(401);
    const a = client(system.url, { authorization: `Bearer ${KEY_A}` });
    expect((await a.get('/memories')).body.pagination.total).toBe(0);
  });

  it('should keep /health open for probes', async () => {
    expect((await client(system.url).get('/health')).status).toBe(200);
  });

  it('should scope data by the tenant the key selects, for the same agent name', async () => {
    const a = client(system.url, { authorization: `Bearer ${KEY_A}` });
    const b = client(system.url, { 'x-api-key': KEY_B });
    const created = await a.post('/memories', { content: 'acme roadmap is confidential' });
    expect(created.status).toBe(201);
    expect((await b.get(`/memories/${created.body.id}`)).status).toBe(404);
    expect((await b.get('/memories')).body.pagination.total).toBe(0);
    expect((await b.get('/search?q=acme%20roadmap')).body.results).toHaveLength(0);
    expect((await a.get(`/memories/${created.body.id}`)).status).toBe(200);
  });
});
