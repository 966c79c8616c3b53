/**
 * Bounded search (issue #35): the index's cost grows with a query's distinct terms, not its repeats, with
 * today's scores kept; queries are held to limits before they reach the index; a search has a deadline;
 * the search tool and ToolEnv turn oversized queries and actions into clear observations.
 */
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { ToolEnv } from '../src/mdp/tool-env.js';
import {
  DEFAULT_QUERY_LIMITS,
  parseQuery,
  QueryLimitError,
  type SearchDocument,
  type Searcher,
  SearchIndex,
  type SearchIndexOptions,
  type SearchOptions,
  SearchTimeoutError,
  searchTool,
  tokenize,
} from '../src/tasks/multihop-qa/search/index.js';
import { TagsFormat } from '../src/tools/formats/tags.js';
import { ToolRegistry } from '../src/tools/registry.js';
import type { Tool } from '../src/tools/tool.js';

/** A small seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCAB = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}`);
/** Zipf-like: low word numbers are common, so some terms are in most documents. */
function word(r: () => number): string {
  return VOCAB[Math.floor(VOCAB.length * r() ** 3)];
}

function corpus(n: number, seed: number): SearchDocument[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 5 + Math.floor(r() * 40) }, () => word(r));
    const contents = words.join(r() < 0.3 ? ', ' : ' ');
    const doc: SearchDocument = { id: `d${i}`, contents };
    if (r() < 0.75) doc.title = `${word(r)} ${r() < 0.5 ? word(r).toUpperCase() : ''}`.trim();
    return doc;
  });
}

/** How SearchIndex.search scored before issue #35: minisearch's own search, its coordination factor undone. */
function referenceSearch(docs: readonly SearchDocument[], options: Required<SearchIndexOptions>) {
  const mini = new MiniSearch<{ i: number; title: string; contents: string }>({
    idField: 'i',
    fields: ['title', 'contents'],
    storeFields: [],
    tokenize,
    processTerm: (term) => term,
    searchOptions: {
      fields: options.titleBoost > 0 ? ['title', 'contents'] : ['contents'],
      combineWith: 'OR',
      prefix: false,
      fuzzy: false,
      boost: { title: options.titleBoost, contents: 1 },
      bm25: { k: options.k1, b: options.b, d: options.delta },
    },
  });
  mini.addAll(docs.map((d, i) => ({ i, title: d.title ?? '', contents: d.contents })));
  return (query: string, k: number) =>
    mini
      .search(query)
      .map((r) => ({
        id: docs[r.id as number].id,
        i: r.id as number,
        score: r.score / Math.max(1, r.queryTerms.length),
      }))
      .sort((x, y) => y.score - x.score || x.i - y.i)
      .slice(0, k)
      .map(({ id, score }) => ({ id, score }));
}

const DOCS = corpus(400, 7);

describe('SearchIndex scoring', () => {
  const settings: Required<SearchIndexOptions>[] = [
    { k1: 1.2, b: 0.7, delta: 0.5, titleBoost: 1 },
    { k1: 0.9, b: 0.4, delta: 0, titleBoost: 2.5 },
    { k1: 1.5, b: 1, delta: 1, titleBoost: 0 },
  ];
  it.each(settings)('gives the scores minisearch gave, to the bit, for queries without repeats (%o)', (o) => {
    const index = SearchIndex.build(DOCS, o);
    const reference = referenceSearch(DOCS, o);
    const r = rng(11);
    for (let q = 0; q < 300; q++) {
      const words = new Set(Array.from({ length: 1 + Math.floor(r() * 8) }, () => word(r)));
      if (r() < 0.2) words.add('unknownterm');
      const query = [...words].map((w) => (r() < 0.2 ? w.toUpperCase() : w)).join(r() < 0.5 ? ' ' : '? ');
      const k = 1 + Math.floor(r() * 20);
      const got = index.search(query, k).map(({ id, score }) => ({ id, score }));
      expect(got, query).toEqual(reference(query, k));
      // toEqual compares numbers with Object.is: equal to the last bit.
    }
  });

  it('counts a repeated term once per occurrence, as before, at the cost of one', () => {
    const o = { k1: 1.2, b: 0.7, delta: 0.5, titleBoost: 1 };
    const index = SearchIndex.build(DOCS, o);
    const reference = referenceSearch(DOCS, o);
    for (const query of ['w0 w0 w1', 'w3 w2 w3 w3 W3', 'w1, w1; w5 w1']) {
      const got = index.search(query, 10);
      const want = reference(query, 10);
      expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
      for (const [j, h] of got.entries()) expect(h.score).toBeCloseTo(want[j].score, 10);
    }
    const once = index.search('w0 w1 w2', 5);
    const many = index.search('w0 w1 w2 '.repeat(1000), 5, { limits: { maxQueryChars: 100_000 } });
    expect(many.map((h) => h.id)).toEqual(once.map((h) => h.id));
    for (const [j, h] of many.entries()) expect(h.score / 1000).toBeCloseTo(once[j].score, 9);
  });

  it("a query's cost grows with its distinct terms, not its repeats", () => {
    const big = SearchIndex.build(corpus(5000, 3));
    const repeated = 'w0 w1 w2 '.repeat(1000); // 3,000 words, 3 distinct
    big.search('w0 w1 w2', 3);
    const t0 = performance.now();
    const hits = big.search(repeated, 3, { limits: { maxQueryChars: 100_000 } });
    const ms = performance.now() - t0;
    expect(hits).toHaveLength(3);
    // Before: one full pass (a Map of result objects) per occurrence, seconds and hundreds of MB.
    expect(ms).toBeLessThan(300);
  });

  it('parseQuery counts distinct terms in order of first use', () => {
    expect(parseQuery('Paris, paris! FRANCE paris')).toEqual({ terms: ['paris', 'france'], counts: [3, 1] });
    expect(parseQuery('  ...  ')).toEqual({ terms: [], counts: [] });
  });
});

describe('SearchIndex limits and deadline', () => {
  const index = SearchIndex.build(DOCS);

  it('refuses a query over the length limit before splitting it, even at 10 MB', () => {
    expect(DEFAULT_QUERY_LIMITS).toEqual({ maxQueryChars: 2048, maxQueryTerms: 64 });
    expect(() => index.search('x'.repeat(2049))).toThrow(QueryLimitError);
    expect(() => index.search('x'.repeat(2049))).toThrow(/2049 characters long; the limit is 2048/);
    const huge = 'capital of france '.repeat(600_000); // 10.8 MB
    const t0 = performance.now();
    expect(() => index.search(huge)).toThrow(/the limit is 2048/);
    expect(performance.now() - t0).toBeLessThan(100);
    expect(index.search('w0 '.repeat(600), 1)).toHaveLength(1); // 1,800 characters, one term: fine
  });

  it('refuses more distinct terms than the limit; limits can be raised per call', () => {
    const many = VOCAB.slice(0, 65).join(' ');
    expect(() => index.search(many)).toThrow(/65 distinct terms; the limit is 64/);
    expect(index.search(VOCAB.slice(0, 64).join(' '), 2)).toHaveLength(2);
    expect(index.search(many, 2, { limits: { maxQueryTerms: 65 } })).toHaveLength(2);
    expect(() => index.search('a', 1, { limits: { maxQueryTerms: 0 } })).toThrow(/maxQueryTerms/);
  });

  it('searchBatch checks every query before searching any, naming the bad one', () => {
    expect(() => index.searchBatch(['w0', 'y'.repeat(3000)], 1)).toThrow(/query 1: .*the limit is 2048/);
  });

  it('stops at its deadline', () => {
    expect(() => index.search('w0 w1', 3, { deadline: Date.now() - 1 })).toThrow(SearchTimeoutError);
    expect(() => index.searchBatch(['w0', 'w1'], 3, { deadline: Date.now() - 1 })).toThrow(/deadline/);
    expect(index.search('w0 w1', 3, { deadline: Date.now() + 60_000 })).toHaveLength(3);
    // A failed search leaves no partial scores behind.
    expect(index.search('w0 w1', 3)).toEqual(SearchIndex.build(DOCS).search('w0 w1', 3));
  });
});

describe('the search tool under bounds', () => {
  const index = SearchIndex.build(DOCS);

  /** A searcher that records what reaches it. */
  function recording(): Searcher & { calls: { queries: string[]; options?: SearchOptions }[] } {
    const calls: { queries: string[]; options?: SearchOptions }[] = [];
    return {
      calls,
      search(query, k, options) {
        calls.push({ queries: [query], options });
        return index.search(query, k, options);
      },
      searchBatch(queries, k, options) {
        calls.push({ queries: [...queries], options });
        return index.searchBatch(queries, k, options);
      },
    };
  }

  it('answers an oversized query with a failed result that states the limit; the searcher never sees it', async () => {
    const s = recording();
    const tool = searchTool(s);
    const long = await tool.execute({ query: 'capital of france '.repeat(3334) });
    expect(long).toEqual({
      content: 'Error: the query is 60012 characters long; the limit is 2048. Search with a few keywords.',
      success: false,
    });
    const wide = await tool.execute({ query: VOCAB.slice(0, 70).join(' ') });
    expect(wide.content).toBe(
      'Error: the query has 70 distinct terms; the limit is 64. Search with a few keywords.',
    );
    const batch = await tool.executeBatch?.([{ query: 'x'.repeat(5000) }, { query: 'w0' }]);
    expect(batch?.[0].success).toBe(false);
    expect(batch?.[1].success).toBe(true);
    expect(s.calls.map((c) => c.queries)).toEqual([['w0']]);
    // The tool gives the searcher a deadline and its limits.
    expect(s.calls[0].options?.deadline).toBeGreaterThan(Date.now());
  });

  it('takes its own limits', async () => {
    const tool = searchTool(index, { maxQueryChars: 10, maxQueryTerms: 2 });
    expect((await tool.execute({ query: 'w0 w1 w2' })).content).toMatch(/3 distinct terms; the limit is 2/);
    expect((await tool.execute({ query: 'w0 w1 w1 w1' })).content).toMatch(
      /11 characters long; the limit is 10/,
    );
    expect((await tool.execute({ query: 'w0 w1' })).success).toBe(true);
  });
});

describe('ToolEnv under bounds', () => {
  const format = new TagsFormat({ tags: [{ tag: 'search', tool: 'search', argument: 'query' }] });
  const env = (tools: Tool<never>[], maxToolCallsPerAction?: number) =>
    new ToolEnv<{ q: string }>({
      tools: new ToolRegistry(tools),
      format,
      maxTurns: 4,
      formatPenalty: 0.1,
      maxToolCallsPerAction,
      buildPrompt: (ex, system) => `${system}\n${ex.q}`,
      score: () => ({ reward: 0, info: {} }),
    });

  it('a 10 MB query through step() comes back as an error observation, quickly', async () => {
    const e = env([searchTool(SearchIndex.build(DOCS))]);
    e.reset({ q: 'q' });
    const t0 = performance.now();
    const r = await e.step(`<search>${'capital of france '.repeat(600_000)}</search>`);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r.done).toBe(false);
    expect(r.toolCalls[0].success).toBe(false);
    expect(r.observation).toContain('characters long; the limit is 2048. Search with a few keywords.');
    expect(r.observation?.length).toBeLessThan(1000);
  });

  it('runs at most maxToolCallsPerAction calls of one action and says so, with the format penalty', async () => {
    let runs = 0;
    const counting: Tool = {
      name: 'search',
      description: 'Counts.',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      execute: async () => {
        runs++;
        return { content: 'ok', success: true };
      },
    };
    const e = env([counting]);
    e.reset({ q: 'q' });
    const t0 = performance.now();
    const r = await e.step('<search>a</search>'.repeat(100_000));
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(runs).toBe(16);
    expect(r.toolCalls).toHaveLength(16);
    expect(r.rewards).toEqual([{ value: -0.1, kind: 'format' }]);
    expect(r.observation).toContain(
      'Error: this action made 100000 tool calls; at most 16 run per action, so the first 16 ran and the other 99984 did not.',
    );
    expect(r.info.toolCallCount).toBe(16);

    const three = env([counting], 3);
    three.reset({ q: 'q' });
    runs = 0;
    const ok = await three.step('<search>a</search><search>b</search><search>c</search>');
    expect(runs).toBe(3);
    expect(ok.rewards).toEqual([]);
    expect(() => env([counting], 0)).toThrow(/maxToolCallsPerAction/);
  });
});
