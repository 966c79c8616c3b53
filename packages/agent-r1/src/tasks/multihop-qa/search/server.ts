/// <reference types="node" preserve="true" />
/// <reference lib="esnext.disposable" preserve="true" />
/**
 * A small HTTP retrieval service, so several trainers share one index (node:http, JSON, loopback by default):
 *
 *   POST /search  {"query": "…", "k": 3}        → {"results": [{id, title?, contents, score}, …]}
 *   POST /search  {"queries": ["…", …], "k": 3} → {"results": [[…], …]}   (one batched pass)
 *   GET  /health                                 → {"status": "ok", "documents": N}
 *
 * Errors answer `{"error": "…"}` with 400 (bad request), 404, 405, 413 (body too large) or 500.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Searcher } from './bm25.js';

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
}

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

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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
  const size = (index as { size?: unknown }).size;

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
      return { results: await index.search(query, k) };
    }
    if (!Array.isArray(queries) || !queries.every((q) => typeof q === 'string'))
      throw new HttpError(400, '"queries" must be an array of strings');
    return { results: queries.length === 0 ? [] : await index.searchBatch(queries, k) };
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = async (): Promise<unknown> => {
      if (path === '/health') {
        if (req.method !== 'GET') throw new HttpError(405, 'use GET /health');
        return typeof size === 'number' ? { status: 'ok', documents: size } : { status: 'ok' };
      }
      if (path === '/search') {
        if (req.method !== 'POST') throw new HttpError(405, 'use POST /search');
        return handleSearch(req);
      }
      throw new HttpError(404, `no route ${path}; use POST /search or GET /health`);
    };
    route().then(
      (body) => send(res, 200, body),
      (e: unknown) => {
        if (res.headersSent) return void res.destroy();
        if (e instanceof HttpError) send(res, e.status, { error: e.message });
        else send(res, 500, { error: `search failed: ${e instanceof Error ? e.message : String(e)}` });
      },
    );
  });

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
