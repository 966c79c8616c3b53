/**
 * The `search` tool: `{ query, k? }` → the top-k documents as observation text, one line each,
 * `Doc 1 (Title): contents…`, every document cut to a character limit. Bad arguments and a failing
 * searcher (e.g. an unreachable search service) come back as failed tool results, never as exceptions.
 */
import type { Tool, ToolResult } from '../../../tools/tool.js';
import type { SearchHit, Searcher } from './bm25.js';
import { type QueryLimits, queryLimitProblem, resolveQueryLimits } from './query.js';

export interface SearchArgs {
  query: string;
  k?: number;
}

export interface SearchToolOptions {
  /** Tool name; default 'search'. */
  name?: string;
  description?: string;
  /** Documents returned when the call gives no k; default 3. */
  defaultK?: number;
  /** Largest k a call may ask for; default 10. */
  maxK?: number;
  /** Each document's text (after the title) is cut to this many characters, with '…'; default 400. */
  maxCharsPerDoc?: number;
  /** Process reward of each successful search; default none. */
  reward?: number;
  /** Longest query, in characters; longer ones get a failed result; default 2048 (`DEFAULT_QUERY_LIMITS`). */
  maxQueryChars?: number;
  /** Most distinct terms in a query; default 64 (`DEFAULT_QUERY_LIMITS`). */
  maxQueryTerms?: number;
  /** A call (or a batch of calls) fails once its search runs this many milliseconds; default 10000. */
  timeoutMs?: number;
}

export const SEARCH_TOOL = 'search';

/** `Doc 1 (Title): contents…` lines; whitespace in the contents is collapsed to single spaces. */
export function formatSearchHits(hits: readonly SearchHit[], maxCharsPerDoc = 400): string {
  return hits
    .map((h, i) => {
      const title = h.title?.trim() ? ` (${h.title.trim()})` : '';
      return `Doc ${i + 1}${title}: ${truncate(h.contents.replace(/\s+/g, ' ').trim(), maxCharsPerDoc)}`;
    })
    .join('\n');
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

function positiveInt(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`searchTool: ${what} must be an integer ≥ 1, got ${v}`);
  return v;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A `search` tool over any searcher: a local `SearchIndex` or a remote one (see `remoteSearchTool`). */
export function searchTool(searcher: Searcher, options: SearchToolOptions = {}): Tool<SearchArgs> {
  const name = options.name ?? SEARCH_TOOL;
  const maxK = positiveInt(options.maxK, 10, 'maxK');
  const defaultK = Math.min(positiveInt(options.defaultK, 3, 'defaultK'), maxK);
  const maxChars = positiveInt(options.maxCharsPerDoc, 400, 'maxCharsPerDoc');
  const { reward } = options;
  const limits: QueryLimits = resolveQueryLimits({
    maxQueryChars: options.maxQueryChars,
    maxQueryTerms: options.maxQueryTerms,
  });
  const timeoutMs = positiveInt(options.timeoutMs, 10_000, 'timeoutMs');
  const bounds = () => ({ limits, deadline: Date.now() + timeoutMs });

  /** The checked call, or the failed result to return for it. */
  const check = (args: SearchArgs): { query: string; k: number } | ToolResult => {
    const query = (args as Partial<SearchArgs> | null | undefined)?.query;
    if (typeof query !== 'string')
      return {
        content: `Error: ${name} needs a "query" string, e.g. {"query": "capital of France"}.`,
        success: false,
      };
    if (query.trim() === '')
      return {
        content: `Error: the ${name} query is empty. Write a few keywords describing what to look up.`,
        success: false,
      };
    // Checked before the query reaches the searcher (and never echoed back: it may be megabytes).
    const problem = queryLimitProblem(query, limits);
    if (problem !== undefined)
      return { content: `Error: ${problem}. Search with a few keywords.`, success: false };
    const k = args.k ?? defaultK;
    if (!Number.isInteger(k) || k < 1 || k > maxK)
      return {
        content: `Error: k must be an integer from 1 to ${maxK}, got ${JSON.stringify(k)}.`,
        success: false,
      };
    return { query: query.trim(), k };
  };

  const found = (query: string, hits: readonly SearchHit[]): ToolResult => {
    const content =
      hits.length === 0
        ? `No documents found for ${JSON.stringify(query)}. Try other keywords.`
        : formatSearchHits(hits, maxChars);
    return reward === undefined ? { content, success: true } : { content, success: true, reward };
  };
  const failed = (e: unknown): ToolResult => ({
    content: `Error: search failed: ${errorMessage(e)}`,
    success: false,
  });

  return {
    name,
    description:
      options.description ??
      'Searches a document collection (BM25 keyword search) and returns the most relevant documents.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Keywords to search for.' },
        k: {
          type: 'integer',
          minimum: 1,
          maximum: maxK,
          description: `Number of documents (default ${defaultK}).`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async execute(args) {
      const c = check(args);
      if ('content' in c) return c;
      try {
        return found(c.query, await searcher.search(c.query, c.k, bounds()));
      } catch (e) {
        return failed(e);
      }
    },
    /** All valid calls in one `searchBatch` pass (at the largest k asked for, then cut per call). */
    async executeBatch(calls) {
      const checked = calls.map(check);
      const valid = checked.flatMap((c, i) => ('content' in c ? [] : [{ ...c, i }]));
      const results: ToolResult[] = checked.map((c) => ('content' in c ? c : failed('not run')));
      if (valid.length === 0) return results;
      const k = valid.reduce((m, v) => Math.max(m, v.k), 1);
      let hits: SearchHit[][];
      try {
        hits = await searcher.searchBatch(
          valid.map((v) => v.query),
          k,
          bounds(),
        );
        if (!Array.isArray(hits) || hits.length !== valid.length)
          throw new Error(
            `expected ${valid.length} result lists, got ${Array.isArray(hits) ? hits.length : typeof hits}`,
          );
      } catch (e) {
        for (const v of valid) results[v.i] = failed(e);
        return results;
      }
      valid.forEach((v, j) => {
        results[v.i] = found(v.query, hits[j].slice(0, v.k));
      });
      return results;
    },
  };
}
