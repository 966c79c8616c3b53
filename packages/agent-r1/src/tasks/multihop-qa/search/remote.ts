/**
 * The client side of `startSearchServer`: a `Searcher` that posts queries to the service, and the same
 * `search` tool over it. An unreachable, slow or failing service surfaces as an Error from the searcher,
 * which the tool turns into a failed tool result (an observation), never a crash.
 */
import type { Tool } from '../../../tools/tool.js';
import type { SearchHit, Searcher } from './bm25.js';
import { DEFAULT_MAX_BATCH_QUERIES } from './query.js';
import { type SearchArgs, type SearchToolOptions, searchTool } from './tool.js';

export interface RemoteSearchOptions {
  /** Per-request timeout in milliseconds; default 10000. */
  timeoutMs?: number;
  /** Most queries per request (the service's `maxBatchQueries`); bigger batches go in several; default 256. */
  maxBatchQueries?: number;
}

/** `http://host:port` or `http://host:port/search` → the /search endpoint. Throws on a malformed URL. */
function searchEndpoint(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`remoteSearcher: invalid URL ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`remoteSearcher: URL must be http(s), got ${JSON.stringify(url)}`);
  if (!u.pathname.endsWith('/search')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/search`;
  return u.toString();
}

function isHit(h: unknown): h is SearchHit {
  if (h === null || typeof h !== 'object') return false;
  const o = h as Record<string, unknown>;
  return (
    typeof o.id === 'string' &&
    typeof o.contents === 'string' &&
    typeof o.score === 'number' &&
    (o.title === undefined || typeof o.title === 'string')
  );
}

export class RemoteSearcher implements Searcher {
  readonly endpoint: string;
  readonly timeoutMs: number;
  readonly maxBatchQueries: number;

  constructor(url: string, options: RemoteSearchOptions = {}) {
    this.endpoint = searchEndpoint(url);
    this.timeoutMs = options.timeoutMs ?? 10_000;
    if (!(this.timeoutMs > 0))
      throw new RangeError(`remoteSearcher: timeoutMs must be > 0, got ${this.timeoutMs}`);
    this.maxBatchQueries = options.maxBatchQueries ?? DEFAULT_MAX_BATCH_QUERIES;
    if (!Number.isInteger(this.maxBatchQueries) || this.maxBatchQueries < 1)
      throw new RangeError(
        `remoteSearcher: maxBatchQueries must be an integer ≥ 1, got ${this.maxBatchQueries}`,
      );
  }

  async search(query: string, k: number): Promise<SearchHit[]> {
    const results = await this.#post({ query, k });
    if (!Array.isArray(results) || !results.every(isHit)) throw this.#badResponse();
    return results;
  }

  /** The queries in requests of at most `maxBatchQueries`, one after another. */
  async searchBatch(queries: readonly string[], k: number): Promise<SearchHit[][]> {
    const all: SearchHit[][] = [];
    for (let start = 0; start < queries.length; start += this.maxBatchQueries)
      all.push(...(await this.#batch(queries.slice(start, start + this.maxBatchQueries), k)));
    return all;
  }

  async #batch(queries: readonly string[], k: number): Promise<SearchHit[][]> {
    const results = await this.#post({ queries, k });
    if (
      !Array.isArray(results) ||
      results.length !== queries.length ||
      !results.every((r) => Array.isArray(r) && r.every(isHit))
    )
      throw this.#badResponse();
    return results as SearchHit[][];
  }

  #badResponse(): Error {
    return new Error(`search service at ${this.endpoint} sent an unexpected response`);
  }

  async #post(body: unknown): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError')
        throw new Error(`search service at ${this.endpoint} did not answer within ${this.timeoutMs} ms`);
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      throw new Error(`search service unreachable at ${this.endpoint} (${why})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const detail = (json as { error?: unknown } | undefined)?.error;
      throw new Error(
        `search service at ${this.endpoint} answered ${res.status}${typeof detail === 'string' ? `: ${detail}` : ''}`,
      );
    }
    if (json === null || typeof json !== 'object') throw this.#badResponse();
    return (json as { results?: unknown }).results;
  }
}

/** A `Searcher` backed by a search service at `url` (its base URL, e.g. `SearchServer.url`). */
export function remoteSearcher(url: string, options: RemoteSearchOptions = {}): RemoteSearcher {
  return new RemoteSearcher(url, options);
}

/** The `search` tool over a remote service; `executeBatch` sends all queries in one request. */
export function remoteSearchTool(
  url: string,
  options: RemoteSearchOptions & SearchToolOptions = {},
): Tool<SearchArgs> {
  return searchTool(remoteSearcher(url, options), options);
}
