import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RemoteSearcher,
  remoteSearchTool,
  SearchIndex,
  type SearchServer,
  searchTool,
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
  { id: 'untitled', contents: 'A note without a title about the zeppelin airship.' },
];
const index = SearchIndex.build(CORPUS);

let service: SearchServer;
beforeAll(async () => {
  service = await startSearchServer(index, { host: '127.0.0.1', port: 0, maxK: 5 });
});
afterAll(async () => {
  await service.close();
});

async function post(body: unknown, path = '/search'): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** A port nothing listens on: one a server had, then gave back. */
async function deadPort(): Promise<number> {
  const s = await startSearchServer(index, { port: 0 });
  const { port } = s;
  await s.close();
  return port;
}

describe('startSearchServer', () => {
  it('listens on loopback at an ephemeral port and reports health', async () => {
    expect(service.host).toBe('127.0.0.1');
    expect(service.port).toBeGreaterThan(0);
    expect(service.url).toBe(`http://127.0.0.1:${service.port}`);
    const res = await fetch(`${service.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', documents: CORPUS.length });
  });

  it('answers one query or a batch with the index results', async () => {
    expect(await post({ query: 'capital of Germany', k: 2 })).toEqual({
      status: 200,
      json: { results: index.search('capital of Germany', 2) },
    });
    const queries = ['river Paris', '', 'zeppelin'];
    expect(await post({ queries, k: 1 })).toEqual({
      status: 200,
      json: { results: index.searchBatch(queries, 1) },
    });
    expect((await post({ query: 'Paris' })).json).toEqual({ results: index.search('Paris', 3) });
  });

  it('rejects bad requests with a JSON error', async () => {
    expect(await post('{nope')).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/JSON/) },
    });
    expect(await post({ query: 'x', k: 6 })).toMatchObject({ status: 400, json: { error: /k must be/ } });
    expect(await post({ query: 'x', queries: ['y'] })).toMatchObject({ status: 400 });
    expect(await post({ queries: [1] })).toMatchObject({ status: 400 });
    expect(await post({ query: 'x' }, '/nowhere')).toMatchObject({ status: 404 });
    expect((await fetch(`${service.url}/search`)).status).toBe(405);
  });

  it('close() frees the port, even with keep-alive connections open', async () => {
    const s = await startSearchServer(index);
    expect((await fetch(`${s.url}/health`)).ok).toBe(true);
    await s.close();
    await s.close(); // idempotent
    await expect(fetch(`${s.url}/health`)).rejects.toThrow();
  });
});

describe('remoteSearchTool', () => {
  it('round-trips through the service like the local tool', async () => {
    const remote = remoteSearchTool(service.url, { maxCharsPerDoc: 40 });
    const local = searchTool(index, { maxCharsPerDoc: 40 });
    for (const args of [
      { query: 'capital of Germany' },
      { query: 'zeppelin', k: 1 },
      { query: 'xylophone' },
      { query: ' ' },
    ])
      expect(await remote.execute(args)).toEqual(await local.execute(args));
    expect((await remote.execute({ query: 'Berlin' })).content).toMatch(
      /^Doc 1 \(Berlin\): Berlin is the capital/,
    );
  });

  it('executeBatch sends all queries in one request', async () => {
    let requests = 0;
    const count = () => requests++;
    service.server.on('request', count);
    const remote = remoteSearchTool(`${service.url}/search`);
    const calls = [{ query: 'capital of France' }, { query: '' }, { query: 'river', k: 1 }];
    const batch = await remote.executeBatch!(calls);
    service.server.off('request', count);
    expect(requests).toBe(1);
    expect(batch).toEqual(await Promise.all(calls.map((c) => searchTool(index).execute(c))));
  });

  it('an unreachable server gives a failed tool result, not a crash', async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const remote = remoteSearchTool(url, { timeoutMs: 2000 });
    const r = await remote.execute({ query: 'Paris' });
    expect(r.success).toBe(false);
    expect(r.content).toMatch(
      new RegExp(`^Error: search failed: search service unreachable at ${url}/search`),
    );
    const batch = await remote.executeBatch!([{ query: 'a' }, { query: 'b' }]);
    expect(batch.every((x) => !x.success && /unreachable/.test(x.content))).toBe(true);
  });

  it('a server that never answers times out into a failed result', async () => {
    const hang: Server = createServer(() => {});
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
      const r = await remoteSearchTool(url, { timeoutMs: 200 }).execute({ query: 'Paris' });
      expect(r).toEqual({
        content: `Error: search failed: search service at ${url}/search did not answer within 200 ms`,
        success: false,
      });
    } finally {
      hang.closeAllConnections();
      await new Promise((resolve) => hang.close(resolve));
    }
  });

  it('a server error comes back with its message', async () => {
    const failing = await startSearchServer({
      search: () => {
        throw new Error('disk on fire');
      },
      searchBatch: () => [],
    });
    try {
      const r = await remoteSearchTool(failing.url).execute({ query: 'Paris' });
      expect(r).toEqual({
        content: `Error: search failed: search service at ${failing.url}/search answered 500: search failed: disk on fire`,
        success: false,
      });
    } finally {
      await failing.close();
    }
  });

  it('rejects a malformed URL up front', () => {
    expect(() => new RemoteSearcher('not a url')).toThrow(/invalid URL/);
    expect(() => remoteSearchTool('ftp://127.0.0.1:1')).toThrow(/http/);
    expect(new RemoteSearcher('http://127.0.0.1:9/api/').endpoint).toBe('http://127.0.0.1:9/api/search');
  });
});
