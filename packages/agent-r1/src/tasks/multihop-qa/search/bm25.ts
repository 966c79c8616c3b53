/**
 * BM25 retrieval over a corpus of `{ id, title?, contents }` documents, built on minisearch's inverted
 * index and its BM25+ scorer (k1 = 1.2, b = 0.7, δ = 0.5 by default; δ = 0 gives classic Okapi BM25).
 * Title and contents are indexed as two fields, each with its own length normalisation, and their scores
 * add up (the title weighted by `titleBoost`). As in minisearch, a field's length is its number of distinct
 * terms, and idf = ln(1 + (N − n + 0.5) / (n + 0.5)). minisearch multiplies a hit's score by the number of
 * query terms it matched; we divide that factor back out, so scores are plain BM25(+) sums over query
 * terms. Queries match exact terms (lower-cased, split on spaces and punctuation): no prefix or fuzzy
 * matching, no stemming, no stop-word list (idf makes common words count for little).
 *
 * A term the query repeats counts once per occurrence (its score times its count in the query: a linear
 * query-term frequency, as minisearch and Lucene's boolean queries give), but is looked up once, so a
 * query's cost grows with its distinct terms. Queries are held to `QueryLimits` (length, distinct terms)
 * and may carry a deadline; see query.ts. Scoring runs over flat arrays (postings.ts), minisearch builds
 * and stores the index.
 */
import MiniSearch, { type AsPlainObject, type Options } from 'minisearch';
import { Postings, type ScoringParams } from './postings.js';
import { parseQuery, type QueryLimits, resolveQueryLimits, tokenize } from './query.js';

export { tokenize };

export interface SearchDocument {
  id: string;
  title?: string;
  contents: string;
}

export interface SearchHit {
  id: string;
  /** Absent when the document has no title. */
  title?: string;
  contents: string;
  /** BM25(+) score: higher is more relevant. */
  score: number;
}

/** How one search (or one batch) is bounded. */
export interface SearchOptions {
  /** A `Date.now()` time after which the work stops with `SearchTimeoutError`; default none. */
  deadline?: number;
  /** Query limits; default `DEFAULT_QUERY_LIMITS`. A query over them throws `QueryLimitError`. */
  limits?: Partial<QueryLimits>;
}

/** Anything that answers queries the way `SearchIndex` does (a local index, a remote service). */
export interface Searcher {
  search(query: string, k: number, options?: SearchOptions): SearchHit[] | Promise<SearchHit[]>;
  /** Many queries in one pass; results in query order. */
  searchBatch(
    queries: readonly string[],
    k: number,
    options?: SearchOptions,
  ): SearchHit[][] | Promise<SearchHit[][]>;
}

export interface SearchIndexOptions {
  /** Term-frequency saturation; default 1.2 (minisearch's default). Must be > 0. */
  k1?: number;
  /** Length normalisation in [0, 1]; default 0.7 (minisearch's default). */
  b?: number;
  /** BM25+ lower bound δ added to each matching term's frequency part; default 0.5. 0 = classic BM25. */
  delta?: number;
  /** Weight of title matches relative to contents matches; default 1. */
  titleBoost?: number;
}

export type ResolvedSearchIndexOptions = Required<SearchIndexOptions>;

export const DEFAULT_SEARCH_INDEX_OPTIONS: Readonly<ResolvedSearchIndexOptions> = Object.freeze({
  k1: 1.2,
  b: 0.7,
  delta: 0.5,
  titleBoost: 1,
});

/** The `format` field of a saved index file. */
export const SEARCH_INDEX_FORMAT = 'agent-r1/bm25-index';
export const SEARCH_INDEX_VERSION = 1;

interface SavedIndex {
  format: typeof SEARCH_INDEX_FORMAT;
  version: number;
  options: ResolvedSearchIndexOptions;
  docs: SearchDocument[];
  index: AsPlainObject;
}

/** What minisearch indexes: the document's position in `docs` (a compact id) and its two text fields. */
interface IndexedDoc {
  i: number;
  title: string;
  contents: string;
}

function resolveOptions(options: SearchIndexOptions = {}): ResolvedSearchIndexOptions {
  const o = { ...DEFAULT_SEARCH_INDEX_OPTIONS, ...stripUndefined(options) };
  const bad = (what: string) => new RangeError(`SearchIndex: ${what}`);
  if (!(Number.isFinite(o.k1) && o.k1 > 0)) throw bad(`k1 must be a number > 0, got ${o.k1}`);
  if (!(Number.isFinite(o.b) && o.b >= 0 && o.b <= 1)) throw bad(`b must be in [0, 1], got ${o.b}`);
  if (!(Number.isFinite(o.delta) && o.delta >= 0)) throw bad(`delta must be a number ≥ 0, got ${o.delta}`);
  if (!(Number.isFinite(o.titleBoost) && o.titleBoost >= 0))
    throw bad(`titleBoost must be a number ≥ 0, got ${o.titleBoost}`);
  return o;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function scoringParams(o: ResolvedSearchIndexOptions): ScoringParams {
  // minisearch reads a boost of 0 as 1, so a zero title weight leaves the title out instead.
  const fields = [{ name: 'contents', boost: 1 }];
  if (o.titleBoost > 0) fields.unshift({ name: 'title', boost: o.titleBoost });
  return { k1: o.k1, b: o.b, delta: o.delta, fields };
}

function miniSearchOptions(o: ResolvedSearchIndexOptions): Options<IndexedDoc> {
  return {
    idField: 'i',
    fields: ['title', 'contents'],
    storeFields: [],
    tokenize,
    processTerm: (term) => term,
    searchOptions: {
      // minisearch reads a boost of 0 as 1, so a zero title weight leaves the title out instead.
      fields: o.titleBoost > 0 ? ['title', 'contents'] : ['contents'],
      combineWith: 'OR',
      prefix: false,
      fuzzy: false,
      boost: { title: o.titleBoost, contents: 1 },
      bm25: { k: o.k1, b: o.b, d: o.delta },
    },
  };
}

function checkK(k: number, where: string): void {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`${where}: k must be an integer ≥ 1, got ${k}`);
}

function checkDocs(docs: readonly SearchDocument[]): void {
  if (!Array.isArray(docs)) throw new TypeError('SearchIndex.build: docs must be an array');
  const seen = new Map<string, number>();
  docs.forEach((d, i) => {
    if (d === null || typeof d !== 'object')
      throw new TypeError(`SearchIndex.build: document ${i} is not an object`);
    if (typeof d.id !== 'string' || d.id.length === 0)
      throw new TypeError(`SearchIndex.build: document ${i} needs a non-empty string id`);
    if (typeof d.contents !== 'string')
      throw new TypeError(`SearchIndex.build: document ${i} ("${d.id}") needs string contents`);
    if (d.title !== undefined && typeof d.title !== 'string')
      throw new TypeError(`SearchIndex.build: document ${i} ("${d.id}") has a non-string title`);
    const prev = seen.get(d.id);
    if (prev !== undefined)
      throw new Error(`SearchIndex.build: duplicate document id "${d.id}" (documents ${prev} and ${i})`);
    seen.set(d.id, i);
  });
}

function copyDoc(d: SearchDocument): SearchDocument {
  return d.title === undefined
    ? { id: d.id, contents: d.contents }
    : { id: d.id, title: d.title, contents: d.contents };
}

export class SearchIndex implements Searcher {
  readonly #docs: readonly SearchDocument[];
  readonly #byId: ReadonlyMap<string, number>;
  readonly #mini: MiniSearch<IndexedDoc>;
  readonly #postings: Postings;
  readonly #options: ResolvedSearchIndexOptions;

  private constructor(
    docs: SearchDocument[],
    mini: MiniSearch<IndexedDoc>,
    options: ResolvedSearchIndexOptions,
  ) {
    this.#docs = docs;
    this.#byId = new Map(docs.map((d, i) => [d.id, i]));
    this.#mini = mini;
    this.#postings = new Postings(mini.toJSON(), scoringParams(options));
    this.#options = options;
  }

  /** Indexes the documents (copied; ids must be unique). Throws on a malformed document or bad option. */
  static build(docs: readonly SearchDocument[], options: SearchIndexOptions = {}): SearchIndex {
    const o = resolveOptions(options);
    checkDocs(docs);
    const copy = docs.map(copyDoc);
    const mini = new MiniSearch<IndexedDoc>(miniSearchOptions(o));
    mini.addAll(copy.map((d, i) => ({ i, title: d.title ?? '', contents: d.contents })));
    return new SearchIndex(copy, mini, o);
  }

  /** Number of documents. */
  get size(): number {
    return this.#docs.length;
  }

  get options(): Readonly<ResolvedSearchIndexOptions> {
    return { ...this.#options };
  }

  /** The document with that id, or undefined. */
  get(id: string): SearchDocument | undefined {
    const i = this.#byId.get(id);
    return i === undefined ? undefined : copyDoc(this.#docs[i]);
  }

  /**
   * The k best documents for the query, best first (ties: corpus order). An empty query finds nothing.
   * Throws `QueryLimitError` for a query over its limits, `SearchTimeoutError` past `options.deadline`.
   */
  search(query: string, k = 3, options: SearchOptions = {}): SearchHit[] {
    checkK(k, 'SearchIndex.search');
    if (typeof query !== 'string') throw new TypeError('SearchIndex.search: query must be a string');
    return this.#search(query, k, resolveQueryLimits(options.limits), options.deadline);
  }

  #search(query: string, k: number, limits: QueryLimits, deadline?: number): SearchHit[] {
    const parsed = parseQuery(query, limits);
    if (parsed.terms.length === 0) return [];
    return this.#postings.topK(parsed, k, deadline).map(({ i, score }) => {
      const d = this.#docs[i];
      return d.title === undefined
        ? { id: d.id, contents: d.contents, score }
        : { id: d.id, title: d.title, contents: d.contents, score };
    });
  }

  /** `search` for each query, in order; every query is checked against the limits before any runs. */
  searchBatch(queries: readonly string[], k = 3, options: SearchOptions = {}): SearchHit[][] {
    checkK(k, 'SearchIndex.searchBatch');
    if (!Array.isArray(queries)) throw new TypeError('SearchIndex.searchBatch: queries must be an array');
    const limits = resolveQueryLimits(options.limits);
    queries.forEach((q, i) => {
      if (typeof q !== 'string') throw new TypeError(`SearchIndex.searchBatch: query ${i} is not a string`);
      try {
        parseQuery(q, limits);
      } catch (e) {
        (e as Error).message = `query ${i}: ${(e as Error).message}`;
        throw e;
      }
    });
    return queries.map((q) => this.#search(q, k, limits, options.deadline));
  }

  /**
   * The index as one JSON value (documents, options and inverted index); `fromJSON` reads it back, and
   * ./index-file.ts writes and reads it as a file.
   */
  toJSON(): object {
    const saved: SavedIndex = {
      format: SEARCH_INDEX_FORMAT,
      version: SEARCH_INDEX_VERSION,
      options: this.#options,
      docs: this.#docs as SearchDocument[],
      index: this.#mini.toJSON(),
    };
    return saved;
  }

  /** Reads `toJSON()`'s value (parsed); errors say that `source` is not a valid search index, and why. */
  static fromJSON(value: unknown, source = 'the value'): SearchIndex {
    const bad = (why: string, cause?: unknown) =>
      new Error(`${source} is not a valid search index (${why})`, { cause });
    const saved = value as SavedIndex;
    if (saved === null || typeof saved !== 'object' || saved.format !== SEARCH_INDEX_FORMAT)
      throw bad(`expected format "${SEARCH_INDEX_FORMAT}"`);
    if (saved.version !== SEARCH_INDEX_VERSION)
      throw bad(
        `unsupported version ${JSON.stringify(saved.version)}; this build reads version ${SEARCH_INDEX_VERSION}`,
      );
    if (!Array.isArray(saved.docs) || saved.index === null || typeof saved.index !== 'object')
      throw bad('missing docs or index');
    let options: ResolvedSearchIndexOptions;
    let mini: MiniSearch<IndexedDoc>;
    try {
      checkDocs(saved.docs);
      options = resolveOptions(saved.options);
      mini = MiniSearch.loadJS<IndexedDoc>(saved.index, miniSearchOptions(options));
    } catch (e) {
      throw bad((e as Error).message, e);
    }
    if (mini.documentCount !== saved.docs.length)
      throw bad(`the index holds ${mini.documentCount} documents but the file lists ${saved.docs.length}`);
    try {
      return new SearchIndex(saved.docs.map(copyDoc), mini, options);
    } catch (e) {
      throw bad((e as Error).message, e);
    }
  }
}
