/// <reference types="node" preserve="true" />
/// <reference lib="esnext.disposable" preserve="true" />
/**
 * A small HTTP retrieval service, so several trainers share one index (node:http, JSON, loopback by default):
 *
 *   POST /search  {"query": "…", "k": 3}        → {"results": [{id, title?, contents, score}, …]}
 *   POST /search  {"queries": ["…", …], "k": 3} → {"results": [[…], …]}   (one batched pass)
 *   GET  /health                                 → {"status": "ok", "documents": N}
 *
 * Errors answer `{"error": "…"}` with 400 (bad request, a body that is not UTF-8, a query over its limits),
 * 404, 405, 408 (a client too slow to send its request), 413 (body too large), 503 (busy, or the search ran
 * past its deadline) or 500. The whole API, with its limits: docs/search-service.md.
 *
 * Bounded: a query is checked against its limits (length, distinct terms) before it reaches the index, a
 * batch against its size; a request's search work has a deadline and runs in slices that let the event loop
 * answer other requests (/health) between them; search requests in progress are capped, and so are open
 * connections and the time a client may take to send its headers and its whole request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Searcher } from './bm25.js';
import {
  DEFAULT_MAX_BATCH_QUERIES,
  QueryLimitError,
  type QueryLimits,
  queryLimitProblem,
  resolveQueryLimits,
  SearchTimeoutError,
} from './query.js';

export interface SearchServerOptions {
  /** Interface to listen on; default '127.0.0.1' (loopback only). */
  host?: string;
  /** Port; default 0 (an ephemeral port, see `SearchServer.port`). */
  port?: number;
  /** k when a request gives none; default 3. */
  defaultK?: number;
  /** Largest k a request may ask for; default 100. */
  maxK?: number;
  /** Largest request body in bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /** Longest query in characters; default `DEFAULT_QUERY_LIMITS.maxQueryChars` (2048). */
  maxQueryChars?: number;
  /** Most distinct terms in a query; default `DEFAULT_QUERY_LIMITS.maxQueryTerms` (64). */
  maxQueryTerms?: number;
  /** Most queries in one batch; default `DEFAULT_MAX_BATCH_QUERIES` (256). */
  maxBatchQueries?: number;
  /** A request's search work stops after this many milliseconds, answered with 503; default 5000. */
  searchTimeoutMs?: number;
  /** Search requests in progress (being read or searched) at most; more are answered 503 at once; default 64. */
  maxPendingSearches?: number;
  /** Open connections at most; more are closed as they come; default 256. */
  maxConnections?: number;
  /** Time a client has to send its request headers; default 10000 ms. */
  headersTimeoutMs?: number;
  /** Time a client has to send its whole request (headers and body); default 30000 ms. */
  requestTimeoutMs?: number;
}

/** Queries answered between two turns of the event loop. */
const SLICE = 8;

export interface SearchServer {
  readonly host: string;
  readonly port: number;
  /** Base URL, e.g. `http://127.0.0.1:41234` (pass it to `remoteSearchTool`). */
  readonly url: string;
  readonly server: Server;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  };
  // A request answered before its body was read (too large, busy): close rather than read the rest.
  if (close) headers.connection = 'close';
  if (status === 503) headers['retry-after'] = 1;
  res.writeHead(status, headers);
  res.end(text);
}

function positiveInt(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`startSearchServer: ${what} must be an integer ≥ 1, got ${v}`);
  return v;
}

/** Strict: a body that is not UTF-8 throws rather than decoding to U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return utf8.decode(Buffer.concat(chunks));
  } catch {
    // Not replaced with U+FFFD: a query the client did not write would be searched and answered.
    throw new HttpError(400, 'the request body is not valid UTF-8; send JSON encoded as UTF-8');
  }
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Serves `index` over HTTP; resolves once listening. */
export async function startSearchServer(
  index: Searcher,
  options: SearchServerOptions = {},
): Promise<SearchServer> {
  const host = options.host ?? '127.0.0.1';
  const defaultK = options.defaultK ?? 3;
  const maxK = options.maxK ?? 100;
  const maxBodyBytes = options.maxBodyBytes ?? 1 << 20;
  const limits: QueryLimits = resolveQueryLimits({
    maxQueryChars: options.maxQueryChars,
    maxQueryTerms: options.maxQueryTerms,
  });
  const maxBatch = positiveInt(options.maxBatchQueries, DEFAULT_MAX_BATCH_QUERIES, 'maxBatchQueries');
  const searchTimeoutMs = positiveInt(options.searchTimeoutMs, 5000, 'searchTimeoutMs');
  const maxPending = positiveInt(options.maxPendingSearches, 64, 'maxPendingSearches');
  const maxConnections = positiveInt(options.maxConnections, 256, 'maxConnections');
  const headersTimeout = positiveInt(options.headersTimeoutMs, 10_000, 'headersTimeoutMs');
  const requestTimeout = positiveInt(options.requestTimeoutMs, 30_000, 'requestTimeoutMs');
  if (headersTimeout > requestTimeout)
    throw new RangeError(
      `startSearchServer: headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeout})`,
    );
  const size = (index as { size?: unknown }).size;
  let pending = 0;

  /** Every query checked before any reaches the index, then answered a slice at a time until the deadline. */
  const search = async (list: readonly string[], k: number, one: boolean): Promise<unknown> => {
    list.forEach((q, i) => {
      const problem = queryLimitProblem(q, limits);
      if (problem !== undefined) throw new HttpError(400, one ? problem : `query ${i}: ${problem}`);
    });
    const deadline = Date.now() + searchTimeoutMs;
    if (one) return index.search(list[0], k, { deadline, limits });
    const results: unknown[] = [];
    for (let start = 0; start < list.length; start += SLICE) {
      if (start > 0) await yieldToEventLoop();
      if (Date.now() > deadline) throw new SearchTimeoutError('the search ran past its deadline');
      results.push(...(await index.searchBatch(list.slice(start, start + SLICE), k, { deadline, limits })));
    }
    return results;
  };

  const handleSearch = async (req: IncomingMessage): Promise<unknown> => {
    const text = await readBody(req, maxBodyBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'the body must be JSON: {"query": "…", "k": 3} or {"queries": ["…"], "k": 3}');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new HttpError(400, 'the body must be a JSON object');
    const { query, queries, k = defaultK } = body as { query?: unknown; queries?: unknown; k?: unknown };
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > maxK)
      throw new HttpError(400, `k must be an integer from 1 to ${maxK}, got ${JSON.stringify(k)}`);
    if ((query === undefined) === (queries === undefined))
      throw new HttpError(400, 'give exactly one of "query" (a string) or "queries" (an array of strings)');
    if (query !== undefined) {
      if (typeof query !== 'string') throw new HttpError(400, '"query" must be a string');
      return { results: await search([query], k, true) };
    }
    if (!Array.isArray(queries) || !queries.every((q) => typeof q === 'string'))
      throw new HttpError(400, '"queries" must be an array of strings');
    if (queries.length > maxBatch)
      throw new HttpError(400, `a batch holds at most ${maxBatch} queries, got ${queries.length}`);
    return { results: await search(queries, k, false) };
  };

  const describe = (e: unknown): [status: number, message: string] => {
    if (e instanceof HttpError) return [e.status, e.message];
    if (e instanceof QueryLimitError) return [400, e.message];
    if (e instanceof SearchTimeoutError)
      return [
        503,
        `the search took longer than its ${searchTimeoutMs} ms deadline; send fewer or shorter queries`,
      ];
    return [500, `search failed: ${e instanceof Error ? e.message : String(e)}`];
  };

  const server = createServer(
    {
      headersTimeout: headersTimeout,
      requestTimeout: requestTimeout,
      // How often node checks those two timeouts (its default, 30 s, would let a slow client stay on long).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      let counted = false;
      const route = async (): Promise<unknown> => {
        if (path === '/health') {
          if (req.method !== 'GET') throw new HttpError(405, 'use GET /health');
          return typeof size === 'number' ? { status: 'ok', documents: size } : { status: 'ok' };
        }
        if (path === '/search') {
          if (req.method !== 'POST') throw new HttpError(405, 'use POST /search');
          if (pending >= maxPending)
            throw new HttpError(503, `busy: ${pending} search requests in progress; retry in a moment`);
          pending++;
          counted = true;
          return handleSearch(req);
        }
        throw new HttpError(404, `no route ${path}; use POST /search or GET /health`);
      };
      route()
        .then(
          (body) => {
            if (!res.destroyed) send(res, 200, body);
          },
          (e: unknown) => {
            if (res.headersSent || res.destroyed) return void res.destroy();
            const [status, message] = describe(e);
            send(res, status, { error: message }, !req.complete);
          },
        )
        .finally(() => {
          if (counted) pending--;
        });
    },
  );
  server.maxConnections = maxConnections;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve, reject) => {
      server.close((e) => (e ? reject(e) : resolve()));
      server.closeAllConnections();
    });
    return closing;
  };
  return {
    host,
    port,
    url: `http://${hostForUrl(host)}:${port}`,
    server,
    close,
    [Symbol.asyncDispose]: close,
  };
}
