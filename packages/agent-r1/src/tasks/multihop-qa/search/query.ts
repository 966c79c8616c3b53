/**
 * What a search query may be, and how it becomes terms. A query is checked against `QueryLimits` before any
 * term is looked up: its length first (before it is even split, so a 10 MB query costs a length read), then
 * its number of distinct terms. Repeated terms are counted, not repeated: a query's cost grows with its
 * distinct terms only.
 */

export interface QueryLimits {
  /** Longest query, in UTF-16 code units (JavaScript string length); default 2048. */
  maxQueryChars: number;
  /** Most distinct terms in one query (after lower-casing and splitting); default 64. */
  maxQueryTerms: number;
}

export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = Object.freeze({
  maxQueryChars: 2048,
  maxQueryTerms: 64,
});

/** Most queries in one batch request to the search service (`RemoteSearcher` splits bigger batches). */
export const DEFAULT_MAX_BATCH_QUERIES = 256;

/** A query over its limits. `SearchIndex.search` throws it; the service answers it with 400. */
export class QueryLimitError extends RangeError {
  override name = 'QueryLimitError';
}

/** Work past its deadline. `SearchIndex.search` throws it; the service answers it with 503. */
export class SearchTimeoutError extends Error {
  override name = 'SearchTimeoutError';
}

/** minisearch's separators (spaces and punctuation); terms are lower-cased, empty ones dropped. */
const SEPARATORS = /[\n\r\p{Z}\p{P}]+/u;

export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(SEPARATORS)
    .filter((t) => t.length > 0);
}

/** The query's distinct terms in order of first use, and how often each occurs. */
export interface ParsedQuery {
  terms: string[];
  counts: number[];
}

/** `limits` with defaults filled in; throws on a limit that is not an integer ≥ 1. */
export function resolveQueryLimits(limits: Partial<QueryLimits> = {}): QueryLimits {
  const o = { ...DEFAULT_QUERY_LIMITS };
  for (const key of ['maxQueryChars', 'maxQueryTerms'] as const) {
    const v = limits[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${key} must be an integer ≥ 1, got ${v}`);
    o[key] = v;
  }
  return o;
}

/** Why the query is over its limits (a sentence for an error or an observation), or undefined if it is not. */
export function queryLimitProblem(
  query: string,
  limits: QueryLimits = DEFAULT_QUERY_LIMITS,
): string | undefined {
  try {
    parseQuery(query, limits);
    return undefined;
  } catch (e) {
    if (e instanceof QueryLimitError) return e.message;
    throw e;
  }
}

/** Checks the query against `limits` (throws `QueryLimitError`) and counts its distinct terms. */
export function parseQuery(query: string, limits: QueryLimits = DEFAULT_QUERY_LIMITS): ParsedQuery {
  if (query.length > limits.maxQueryChars)
    throw new QueryLimitError(
      `the query is ${query.length} characters long; the limit is ${limits.maxQueryChars}`,
    );
  const index = new Map<string, number>();
  const terms: string[] = [];
  const counts: number[] = [];
  for (const t of tokenize(query)) {
    const i = index.get(t);
    if (i !== undefined) {
      counts[i]++;
      continue;
    }
    index.set(t, terms.length);
    terms.push(t);
    counts.push(1);
  }
  if (terms.length > limits.maxQueryTerms)
    throw new QueryLimitError(
      `the query has ${terms.length} distinct terms; the limit is ${limits.maxQueryTerms}`,
    );
  return { terms, counts };
}
