import { describe, expect, it } from 'vitest';
import {
  formatSearchHits,
  type Searcher,
  type SearchHit,
  SearchIndex,
  searchTool,
} from '../src/tasks/multihop-qa/search/index.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { validateArgs } from '../src/tools/validate.js';

const CORPUS = [
  {
    id: 'paris',
    title: 'Paris',
    contents: 'Paris is the capital and largest city of France,\n on the Seine.',
  },
  { id: 'berlin', title: 'Berlin', contents: 'Berlin is the capital of Germany and its largest city.' },
  {
    id: 'seine',
    title: 'Seine',
    contents: 'The Seine is a river in northern France that flows through Paris.',
  },
  { id: 'untitled', contents: 'A note without a title about the zeppelin airship.' },
];
const index = SearchIndex.build(CORPUS);

describe('formatSearchHits', () => {
  it('numbers documents, shows titles, collapses whitespace and truncates', () => {
    const hits: SearchHit[] = [
      { id: 'a', title: 'Alpha', contents: 'one  two\nthree', score: 2 },
      { id: 'b', contents: 'x'.repeat(50), score: 1 },
    ];
    expect(formatSearchHits(hits, 20)).toBe(`Doc 1 (Alpha): one two three\nDoc 2: ${'x'.repeat(19)}…`);
    expect(formatSearchHits([], 20)).toBe('');
  });
});

describe('searchTool', () => {
  const tool = searchTool(index, { defaultK: 2, maxK: 3, maxCharsPerDoc: 30 });

  it('declares the Tool interface', () => {
    expect(tool.name).toBe('search');
    expect(tool.parameters).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 3 } },
    });
    expect(new ToolRegistry([tool]).get('search')).toBe(tool);
    expect(validateArgs(tool, { query: 'x', k: 4 }).ok).toBe(false);
    expect(validateArgs(tool, { query: 'x' }).ok).toBe(true);
  });

  it('returns the top-k documents as the observation, each cut to the limit', async () => {
    const r = await tool.execute({ query: 'capital of Germany' });
    expect(r.success).toBe(true);
    const lines = r.content.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('Doc 1 (Berlin): Berlin is the capital of Germ…');
    expect(lines[1]).toMatch(/^Doc 2 \(Paris\): /);
    const one = await tool.execute({ query: 'zeppelin', k: 1 });
    expect(one).toEqual({ content: 'Doc 1: A note without a title about…', success: true });
    const three = await tool.execute({ query: 'Paris France Germany', k: 3 });
    expect(three.content.split('\n')).toHaveLength(3);
  });

  it('says so when nothing matches', async () => {
    expect(await tool.execute({ query: 'xylophone' })).toEqual({
      content: 'No documents found for "xylophone". Try other keywords.',
      success: true,
    });
  });

  it('answers an empty query or bad k with a failed result', async () => {
    for (const query of ['', '   \n'])
      expect(await tool.execute({ query })).toEqual({
        content: 'Error: the search query is empty. Write a few keywords describing what to look up.',
        success: false,
      });
    expect(await tool.execute({} as never)).toMatchObject({
      success: false,
      content: expect.stringMatching(/"query" string/),
    });
    expect(await tool.execute({ query: 'Paris', k: 0 })).toEqual({
      content: 'Error: k must be an integer from 1 to 3, got 0.',
      success: false,
    });
    expect((await tool.execute({ query: 'Paris', k: 1.5 })).success).toBe(false);
    expect((await tool.execute({ query: 'Paris', k: 4 })).success).toBe(false);
  });

  it('adds the process reward to successful searches only', async () => {
    const rewarded = searchTool(index, { reward: 0.1 });
    expect((await rewarded.execute({ query: 'Paris' })).reward).toBe(0.1);
    expect((await rewarded.execute({ query: ' ' })).reward).toBeUndefined();
  });

  it('executeBatch searches all valid queries in one pass and matches execute', async () => {
    const calls = [
      { query: 'capital of France' },
      { query: '' },
      { query: 'river', k: 1 },
      { query: 'Berlin', k: 3 },
    ];
    let batches = 0;
    const counting: Searcher = {
      search: (q, k) => index.search(q, k),
      searchBatch: (qs, k) => {
        batches++;
        return index.searchBatch(qs, k);
      },
    };
    const t = searchTool(counting, { defaultK: 2, maxK: 3, maxCharsPerDoc: 30 });
    const batch = await t.executeBatch!(calls);
    expect(batches).toBe(1);
    expect(batch).toEqual(await Promise.all(calls.map((c) => tool.execute(c))));
    expect(batch[1].success).toBe(false);
    expect(await t.executeBatch!([])).toEqual([]);
  });

  it('turns a failing searcher into failed results, never a throw', async () => {
    const broken: Searcher = {
      search: () => {
        throw new Error('index offline');
      },
      searchBatch: async () => {
        throw new Error('index offline');
      },
    };
    const t = searchTool(broken);
    expect(await t.execute({ query: 'Paris' })).toEqual({
      content: 'Error: search failed: index offline',
      success: false,
    });
    const batch = await t.executeBatch!([{ query: 'Paris' }, { query: '' }]);
    expect(batch.map((r) => r.success)).toEqual([false, false]);
    expect(batch[0].content).toBe('Error: search failed: index offline');
    expect(batch[1].content).toMatch(/query is empty/);
  });

  it('rejects bad options', () => {
    expect(() => searchTool(index, { maxK: 0 })).toThrow(/maxK/);
    expect(() => searchTool(index, { maxCharsPerDoc: 2.5 })).toThrow(/maxCharsPerDoc/);
  });
});
