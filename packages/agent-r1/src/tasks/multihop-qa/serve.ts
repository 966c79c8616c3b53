/**
 * `agent-r1 serve-search`: a corpus index over HTTP, until SIGINT / SIGTERM: the built-in multi-hop corpus,
 * or a FlashRAG-style JSONL corpus (`{"id", "contents"}` per line, optional "title") given as `corpus`.
 * The HTTP API: docs/search-service.md.
 */
import type { CliOutput } from '../../cli/handlers.js';
import { loadCorpusJsonl } from './data/jsonl.js';
import { SearchIndex, type SearchServer, startSearchServer } from './search/index.js';
import { loadMultihopResources } from './task.js';

export interface MultihopSearchServerOptions {
  host?: string;
  port?: number;
  /** A JSONL corpus file to serve instead of the built-in corpus (as `eval --corpus` reads it). */
  corpus?: string;
  /** Where the built-in dataset is cached, its seed and whether it names bridge types (without `corpus`). */
  cacheDir?: string;
  dataSeed?: number;
  bridgeTypes?: boolean;
  /** The index's weight of a title match (the task's `searchTitleBoost`); default 1. */
  titleBoost?: number;
}

/** The index of a JSONL corpus file; throws naming the file (and line) if it is unreadable, bad or empty. */
export function corpusFileIndex(path: string, titleBoost?: number): SearchIndex {
  const docs = loadCorpusJsonl(path);
  if (docs.length === 0) throw new Error(`corpus ${path}: the file holds no documents`);
  // A document without a title is served without one (not with an empty one).
  return SearchIndex.build(
    docs.map((d) => (d.title ? d : { id: d.id, contents: d.contents })),
    { titleBoost },
  );
}

/**
 * The corpus file `serve-search` serves: its `--corpus`, else the multi-hop task's own `corpus` option
 * (`--preset multihop taskOptions.corpus=c.jsonl`, as `eval` reads it); undefined for the built-in corpus.
 */
export function servedCorpus(ctx: ServeContext): string | undefined {
  if (ctx.corpus !== undefined) return ctx.corpus;
  const own = multihopOption(ctx, 'corpus');
  return typeof own === 'string' && own !== '' ? own : undefined;
}

/** Whether the built-in corpus `serve-search` serves names bridge types (the task's `bridgeTypes` option). */
export const servedBridgeTypes = (ctx: ServeContext): boolean => multihopOption(ctx, 'bridgeTypes') === true;

/** The title weight of the index `serve-search` serves (the task's `searchTitleBoost`); undefined: the default. */
export function servedTitleBoost(ctx: ServeContext): number | undefined {
  const boost = multihopOption(ctx, 'searchTitleBoost');
  return typeof boost === 'number' ? boost : undefined;
}

type ServeContext = { corpus?: string; config: { task: string; taskOptions?: Record<string, unknown> } };

/** One of the multi-hop task's own options as the config gives it; undefined for another task. */
const multihopOption = (ctx: ServeContext, key: string): unknown =>
  ctx.config.task === 'multihop-qa' ? ctx.config.taskOptions?.[key] : undefined;

/** Builds (or loads) the corpus index and starts serving it; the caller closes the server. */
export async function startMultihopSearchServer(
  options: MultihopSearchServerOptions = {},
): Promise<SearchServer> {
  const index = options.corpus
    ? corpusFileIndex(options.corpus, options.titleBoost)
    : loadMultihopResources(options).index;
  return startSearchServer(index, { host: options.host, port: options.port });
}

/**
 * Serves until SIGINT or SIGTERM (or `signal` aborts), then closes the server; resolves after closing.
 * `onStart` gets the running server (tests use it).
 */
export async function serveMultihopSearch(
  options: MultihopSearchServerOptions & { host: string; port: number },
  out: CliOutput,
  hooks: { signal?: AbortSignal; onStart?: (server: SearchServer) => void } = {},
): Promise<void> {
  const server = await startMultihopSearchServer(options);
  if (options.corpus) out.write(`search server: serving the corpus ${options.corpus}\n`);
  out.write(`search server: ${server.url} (POST /search, GET /health); Ctrl-C to stop\n`);
  hooks.onStart?.(server);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      hooks.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (hooks.signal?.aborted) stop();
    else hooks.signal?.addEventListener('abort', stop, { once: true });
  });
  await server.close();
  out.write('search server: closed\n');
}
