/**
 * The search service under bad input and load (issue #35): oversized queries and batches get a 400 before
 * they reach the index, a request's work has a deadline (503), /health answers while a long batch runs,
 * slow clients are timed out, connections and requests in progress are capped; the client splits big
 * batches into requests the service takes. All on 127.0.0.1, bounded in count and time.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RemoteSearcher,
  type Searcher,
  type SearchHit,
  SearchIndex,
  type SearchServer,
  startSearchServer,
} from '../src/tasks/multihop-qa/search/index.js';

const CORPUS = [
  { id: 'paris', title: 'Paris', contents: 'Paris is the capital and largest city of France, on the Seine.' },
  { id: 'berlin', title: 'Berlin', contents: 'Berlin is the capital of Germany and its largest city.' },
  {
    id: 'seine',
    title: 'Seine',
    contents: 'The Seine is a river in northern France that flows through Paris.',
  },
];
const index = SearchIndex.build(CORPUS);

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const res = await fetch(`${url}/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

async function timedHealth(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(20_000) });
  await res.json();
  return performance.now() - t0;
}

/** Burns `ms` of CPU on the event loop's thread, as a slow index would. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** A searcher that takes `ms` of CPU per query and counts its batch calls. */
function slowSearcher(ms: number): Searcher & { batches: number } {
  const s = {
    batches: 0,
    search(query: string, k: number): SearchHit[] {
      busy(ms);
      return index.search(query, k);
    },
    searchBatch(queries: readonly string[], k: number): SearchHit[][] {
      s.batches++;
      return queries.map((q) => s.search(q, k));
    },
  };
  return s;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** Resolves with the ms until the server closes the socket, or with Infinity after `limitMs`. */
function closedWithin(s: Socket, limitMs: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), limitMs);
    s.on('error', () => {});
    s.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
    s.resume();
  });
}

describe('the search service refuses oversized work with a 4xx', () => {
  let service: SearchServer;
  beforeAll(async () => {
    service = await startSearchServer(index);
  });
  afterAll(() => service.close());

  it('a 60 KB query gets 400 naming the limit, and /health goes on answering', async () => {
    const { status, json } = await post(service.url, { query: 'capital of france '.repeat(3334) });
    expect(status).toBe(400);
    expect(json).toEqual({ error: 'the query is 60012 characters long; the limit is 2048' });
    expect(await timedHealth(service.url)).toBeLessThan(1000);
    // Issue #35's 6 KB query (3.3 s and /health blocked before) is refused too.
    expect((await post(service.url, { query: 'capital of france '.repeat(334) })).status).toBe(400);
  });

  it('too many distinct terms, or one bad query of a batch, gets 400 naming it', async () => {
    const wide = Array.from({ length: 65 }, (_, i) => `t${i}`).join(' ');
    expect(await post(service.url, { query: wide })).toMatchObject({
      status: 400,
      json: { error: 'the query has 65 distinct terms; the limit is 64' },
    });
    expect(await post(service.url, { queries: ['Paris', 'x'.repeat(2049)] })).toMatchObject({
      status: 400,
      json: { error: 'query 1: the query is 2049 characters long; the limit is 2048' },
    });
  });

  it('a batch over maxBatchQueries gets 400; one at the limit is answered', async () => {
    const over = await post(service.url, { queries: Array(257).fill('Paris') });
    expect(over).toMatchObject({
      status: 400,
      json: { error: 'a batch holds at most 256 queries, got 257' },
    });
    const at = await post(service.url, { queries: Array(256).fill('Paris'), k: 1 });
    expect(at.status).toBe(200);
    expect((at.json as { results: unknown[] }).results).toHaveLength(256);
  });

  it('limits are options of the service', async () => {
    const small = await startSearchServer(index, { maxQueryChars: 5, maxQueryTerms: 1, maxBatchQueries: 2 });
    try {
      expect((await post(small.url, { query: 'Paris' })).status).toBe(200);
      expect((await post(small.url, { query: 'Parisx' })).status).toBe(400);
      expect((await post(small.url, { query: 'a b' })).status).toBe(400);
      expect((await post(small.url, { queries: ['a', 'b', 'c'] })).status).toBe(400);
    } finally {
      await small.close();
    }
    await expect(startSearchServer(index, { searchTimeoutMs: 0 })).rejects.toThrow(/searchTimeoutMs/);
    await expect(
      startSearchServer(index, { headersTimeoutMs: 5000, requestTimeoutMs: 1000 }),
    ).rejects.toThrow(/headersTimeoutMs/);
  });
});

describe('the search service under slow work and slow clients', () => {
  it("a request's search work stops at its deadline with 503", async () => {
    const slow = slowSearcher(20);
    const service = await startSearchServer(slow, { searchTimeoutMs: 100 });
    try {
      const t0 = performance.now();
      const r = await post(service.url, { queries: Array(200).fill('Paris') }); // 4 s of work without a deadline
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.json).toEqual({
        error: 'the search took longer than its 100 ms deadline; send fewer or shorter queries',
      });
      // A SearchIndex stops inside its own work too.
      expect(() => index.search('Paris', 1, { deadline: 0 })).toThrow(/deadline/);
    } finally {
      await service.close();
    }
  });

  it('/health answers while a long batch is being searched', async () => {
    const slow = slowSearcher(5);
    const service = await startSearchServer(slow);
    try {
      await timedHealth(service.url);
      const batch = post(service.url, { queries: Array(200).fill('Paris') }); // 1 s of work
      await new Promise((r) => setTimeout(r, 100));
      const during = await timedHealth(service.url);
      const done = await batch;
      expect(done.status).toBe(200);
      expect((done.json as { results: unknown[] }).results).toHaveLength(200);
      expect(slow.batches).toBeGreaterThan(1); // answered in slices, the event loop turning between them
      expect(during).toBeLessThan(400);
    } finally {
      await service.close();
    }
  });

  it('closes connections of clients too slow to send their headers or their body', async () => {
    const service = await startSearchServer(index, { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const headers = await open(service.port);
        headers.write('POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // never ends its headers
        const body = await open(service.port);
        body.write(
          'POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query"',
        ); // never ends its body
        sockets.push(headers, body);
      }
      expect(await timedHealth(service.url)).toBeLessThan(1000);
      const closed = await Promise.all(sockets.map((s) => closedWithin(s, 5000)));
      for (const ms of closed) expect(ms).toBeLessThan(5000);
    } finally {
      for (const s of sockets) s.destroy();
      await service.close();
    }
  });

  it('caps open connections and search requests in progress', async () => {
    const capped = await startSearchServer(index, { maxConnections: 3 });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await open(capped.port));
      const extra = await open(capped.port);
      held.push(extra);
      expect(await closedWithin(extra, 3000)).toBeLessThan(3000);
    } finally {
      for (const s of held) s.destroy();
      await capped.close();
    }

    const busyService = await startSearchServer(index, { maxPendingSearches: 1 });
    const slow = await open(busyService.port);
    try {
      // One search request in progress: its body is still on its way.
      slow.write('POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 20\r\n\r\n{"q');
      await new Promise((r) => setTimeout(r, 100));
      const r = await post(busyService.url, { query: 'Paris' });
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ error: 'busy: 1 search requests in progress; retry in a moment' });
      expect(await timedHealth(busyService.url)).toBeLessThan(1000);
      slow.destroy();
      await new Promise((res) => setTimeout(res, 100));
      expect((await post(busyService.url, { query: 'Paris' })).status).toBe(200);
    } finally {
      slow.destroy();
      await busyService.close();
    }
  });
});

describe('RemoteSearcher against the bounded service', () => {
  it('splits a batch bigger than the service takes into several requests', async () => {
    const counting = slowSearcher(0);
    const service = await startSearchServer(counting);
    let requests = 0;
    service.server.on('request', () => requests++);
    try {
      const queries = Array.from({ length: 600 }, (_, i) => (i % 2 ? 'Paris' : 'Berlin capital'));
      const results = await new RemoteSearcher(service.url).searchBatch(queries, 1);
      expect(requests).toBe(3); // 256 + 256 + 88
      expect(results).toHaveLength(600);
      expect(results[1][0].id).toBe('paris');
      expect(results[598][0].id).toBe('berlin');
      const small = new RemoteSearcher(service.url, { maxBatchQueries: 100 });
      expect(await small.searchBatch(queries.slice(0, 250), 1)).toEqual(results.slice(0, 250));
      expect(() => new RemoteSearcher(service.url, { maxBatchQueries: 0 })).toThrow(/maxBatchQueries/);
    } finally {
      await service.close();
    }
  });
});
