import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SearchDocument,
  SearchIndex,
  loadSearchIndex,
  saveSearchIndex,
  tokenize,
} from '../src/tasks/multihop-qa/search/index.js';

export const CORPUS: SearchDocument[] = [
  { id: 'paris', title: 'Paris', contents: 'Paris is the capital and largest city of France, on the Seine.' },
  { id: 'berlin', title: 'Berlin', contents: 'Berlin is the capital of Germany and its largest city.' },
  {
    id: 'seine',
    title: 'Seine',
    contents: 'The Seine is a river in northern France that flows through Paris.',
  },
  {
    id: 'einstein',
    title: 'Albert Einstein',
    contents: 'Einstein was a physicist born in Ulm who developed relativity.',
  },
  { id: 'ulm', title: 'Ulm', contents: 'Ulm is a city on the Danube in Baden-Württemberg, Germany.' },
  { id: 'danube', title: 'Danube', contents: 'The Danube is the second-longest river in Europe.' },
  { id: 'untitled', contents: 'A note without a title about the zeppelin airship.' },
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'search-index-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('SearchIndex', () => {
  const index = SearchIndex.build(CORPUS);

  it('ranks the document holding the query terms first', () => {
    expect(index.search('capital of Germany', 3)[0].id).toBe('berlin');
    expect(index.search('physicist relativity', 3)[0].id).toBe('einstein');
    expect(index.search('river that flows through Paris', 3)[0].id).toBe('seine');
    expect(index.search('ZEPPELIN', 1)).toEqual([
      { id: 'untitled', contents: CORPUS[6].contents, score: expect.any(Number) },
    ]);
    const hits = index.search('Ulm', 5);
    expect(hits.map((h) => h.id).sort()).toEqual(['einstein', 'ulm']);
    expect(hits[0]).toMatchObject({ id: 'ulm', title: 'Ulm' });
  });

  it('returns at most k hits, best first, with positive scores', () => {
    const hits = index.search('city river capital France Germany', 2);
    expect(hits).toHaveLength(2);
    expect(hits[0].score).toBeGreaterThanOrEqual(hits[1].score);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect(index.search('city', 10).length).toBeLessThanOrEqual(CORPUS.length);
    expect(() => index.search('city', 0)).toThrow(/k must be an integer/);
  });

  it('finds nothing for empty or unknown queries', () => {
    expect(index.search('   ', 3)).toEqual([]);
    expect(index.search('xylophone', 3)).toEqual([]);
  });

  it('scores are plain BM25(+) sums (no coordination factor) and follow k1/b/delta', () => {
    // One term: a single-field match in a one-term-query equals the per-term score.
    const classic = SearchIndex.build(CORPUS, { delta: 0, titleBoost: 0 });
    const [hit] = classic.search('zeppelin', 1);
    const n = CORPUS.length;
    const idf = Math.log(1 + (n - 1 + 0.5) / (1 + 0.5));
    // minisearch measures a field's length in distinct tokens.
    const lens = CORPUS.map((d) => new Set(tokenize(d.contents)).size);
    const avg = lens.reduce((a, b) => a + b, 0) / n;
    const { k1, b } = classic.options;
    const expected = (idf * (1 * (k1 + 1))) / (1 + k1 * (1 - b + (b * lens[6]) / avg));
    expect(hit.score).toBeCloseTo(expected, 6);
    // Two terms matching in one document: the sum of the two one-term scores.
    const both = classic.search('zeppelin airship', 1)[0].score;
    const sum = classic.search('zeppelin', 1)[0].score + classic.search('airship', 1)[0].score;
    expect(both).toBeCloseTo(sum, 9);
  });

  it('batch search equals one search per query', () => {
    const qs = ['capital of France', '', 'Danube river'];
    expect(index.searchBatch(qs, 2)).toEqual(qs.map((q) => index.search(q, 2)));
  });

  it('rejects malformed documents and duplicate ids', () => {
    expect(() =>
      SearchIndex.build([
        { id: 'a', contents: 'x' },
        { id: 'a', contents: 'y' },
      ]),
    ).toThrow(/duplicate document id "a" \(documents 0 and 1\)/);
    expect(() => SearchIndex.build([{ id: '', contents: 'x' }])).toThrow(/non-empty string id/);
    expect(() => SearchIndex.build([{ id: 'a' } as SearchDocument])).toThrow(/string contents/);
    expect(() => SearchIndex.build(CORPUS, { b: 2 })).toThrow(/b must be in \[0, 1\]/);
  });

  it('saveSearchIndex/loadSearchIndex round-trip to equal results, atomically', async () => {
    const custom = SearchIndex.build(CORPUS, { k1: 0.9, b: 0.4, titleBoost: 2 });
    const path = join(dir, 'index.json');
    await saveSearchIndex(custom, path);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const loaded = await loadSearchIndex(path);
    expect(loaded.size).toBe(CORPUS.length);
    expect(loaded.options).toEqual(custom.options);
    expect(loaded.get('paris')).toEqual(CORPUS[0]);
    for (const q of ['capital of Germany', 'Ulm physicist', 'river Paris France', 'zeppelin', 'nothing here'])
      expect(loaded.search(q, 5)).toEqual(custom.search(q, 5));
    // Overwriting an existing file works too.
    await saveSearchIndex(index, path);
    expect((await loadSearchIndex(path)).search('Seine', 3)).toEqual(index.search('Seine', 3));
  });

  it('loadSearchIndex names a missing or bad file', async () => {
    const missing = join(dir, 'missing.json');
    await expect(loadSearchIndex(missing)).rejects.toThrow(`no index file at ${missing}`);
    const garbage = join(dir, 'garbage.json');
    await writeFile(garbage, '{ not json');
    await expect(loadSearchIndex(garbage)).rejects.toThrow(
      `${garbage} is not a valid search index (invalid JSON`,
    );
    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ hello: 'world' }));
    await expect(loadSearchIndex(other)).rejects.toThrow(
      `${other} is not a valid search index (expected format`,
    );
    await expect(loadSearchIndex(dir)).rejects.toThrow(`cannot read ${dir}`);
  });

  it('builds a 20k-document corpus in seconds', () => {
    let a = 12345; // mulberry32
    const rand = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const vocab = Array.from({ length: 30_000 }, (_, i) => `w${i.toString(36)}`);
    // Zipf-ish word choice, ~40 words a document.
    const word = () => vocab[Math.floor(vocab.length * rand() ** 3)];
    const docs: SearchDocument[] = Array.from({ length: 20_000 }, (_, i) => ({
      id: `d${i}`,
      title: `${word()} ${word()}`,
      contents: Array.from({ length: 40 }, word).join(' '),
    }));
    const t0 = performance.now();
    const big = SearchIndex.build(docs);
    const buildMs = performance.now() - t0;
    const t1 = performance.now();
    const queries = Array.from({ length: 100 }, () => `${word()} ${word()} ${word()}`);
    big.searchBatch(queries, 5);
    const searchMs = (performance.now() - t1) / queries.length;
    console.log(`SearchIndex: built 20000 docs in ${buildMs.toFixed(0)} ms; ${searchMs.toFixed(2)} ms/query`);
    expect(big.size).toBe(20_000);
    // Its five rarest words find a document.
    const rare = docs[123].contents
      .split(' ')
      .sort((x, y) => vocab.indexOf(y) - vocab.indexOf(x))
      .slice(0, 5);
    expect(big.search(rare.join(' '), 1)[0].id).toBe('d123');
    // ~2–3 s on an idle laptop-class core; generous so a loaded CI machine does not flake.
    expect(buildMs).toBeLessThan(20_000);
  });
});
