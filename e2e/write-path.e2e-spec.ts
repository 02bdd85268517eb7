import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '#testing';
import { launchSource, type SourceProcess } from './source-process.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** A counter's value in the Prometheus text, summed over the series matching every given label. */
function counter(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * The embedded write path as a client sees it, in a process of its own: writes made together share the outbox's
 * fsyncs and the table's commits, and every acknowledged write survives a kill -9 that comes right after its answer
 * (before the table has it: the outbox is its write-ahead log).
 */
describe('write path (embedded, own process)', () => {
  let dir: string;
  let alfred: SourceProcess | undefined;
  let url: string;

  const start = async () => {
    alfred = launchSource('services/main.ts', {
      ALFRED_DATA_DIR: join(dir, 'data'),
      ALFRED_API_PORT: '0',
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'info',
    });
    url = (await alfred.waitFor(/Alfred is listening on (http:\/\/[^\s"]+)/))[1]!;
  };
  const metrics = async () => (await fetch(`${url}/metrics`)).text();
  const write = async (i: number): Promise<{ id: string; content: string }> => {
    const content = `burst memory number ${i} about espresso`;
    const res = await fetch(`${url}/memories`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ content }),
    });
    expect(res.status).toBe(201);
    return { id: ((await res.json()) as { id: string }).id, content };
  };
  const batch = async (i: number): Promise<Array<{ id: string; content: string }>> => {
    const memories = Array.from({ length: 25 }, (_, j) => ({ content: `batch ${i} item ${j}` }));
    const res = await fetch(`${url}/memories/batch`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ memories }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { memories: Array<{ id: string; content: string }> }).memories;
  };
  const burst = async (from: number) => {
    const answers = await Promise.all([
      ...Array.from({ length: 120 }, (_, i) => write(from + i)),
      ...Array.from({ length: 4 }, (_, i) => batch(from + i)),
    ]);
    return answers.flat();
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-write-path-'));
    await start();
  });
  afterAll(async () => {
    await alfred?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('should gather concurrent writes into fewer outbox fsyncs and table commits than writes', async () => {
    const before = await metrics();
    const acknowledged = await burst(0);
    const changes = 120 + 4;
    // The table receives the rows in the background; wait until it holds all of them.
    await pollUntil(
      async () =>
        counter(await metrics(), 'alfred_store_rows_written_total', { collection: 'memories' }) >= acknowledged.length,
      20_000,
      'the burst to reach the table',
    );
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) =>
      counter(after, name, labels) - counter(before, name, labels);
    expect(delta('alfred_log_records_total', { log: 'outbox' })).toBeGreaterThanOrEqual(changes);
    expect(delta('alfred_log_syncs_total', { log: 'outbox' })).toBeLessThan(changes);
    expect(delta('alfred_store_commits_total', { collection: 'memories' })).toBeGreaterThan(0);
    expect(delta('alfred_store_commits_total', { collection: 'memories' })).toBeLessThan(changes / 4);
  });

  it('should keep every acknowledged write, once, through a kill -9 right after the answers', async () => {
    const stored = counter(await metrics(), 'alfred_store_rows_written_total', { collection: 'memories' });
    const acknowledged = await burst(1_000);
    // Killed before the table has them (it gets them a flush delay later): only the outbox holds them.
    const inTable = counter(await metrics(), 'alfred_store_rows_written_total', { collection: 'memories' }) - stored;
    await alfred!.kill();
    expect(inTable).toBeLessThan(acknowledged.length);
    await start();
    for (const { id, content } of acknowledged) {
      const res = await fetch(`${url}/memories/${id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { content: string }).content).toBe(content);
    }
    const history = await (await fetch(`${url}/memories/${acknowledged[0]!.id}/history`)).json();
    expect((history as { events: Array<{ kind: string }> }).events.map((e) => e.kind)).toEqual(['created']);
    const listed = (await (await fetch(`${url}/memories?limit=1`)).json()) as { pagination: { total: number } };
    expect(listed.pagination.total).toBe(2 * acknowledged.length);
    const found = (await (
      await fetch(`${url}/search?q=${encodeURIComponent('burst memory number 1007')}&limit=1`)
    ).json()) as { results: Array<{ content: string }> };
    expect(found.results[0]!.content).toBe('burst memory number 1007 about espresso');
  });
});
