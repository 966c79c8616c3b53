/** `agent-r1 serve-search`: the multi-hop corpus index over HTTP, until SIGINT / SIGTERM. */
import type { CliOutput } from '../../cli/handlers.js';
import { type SearchServer, startSearchServer } from './search/index.js';
import { loadMultihopResources } from './task.js';

/** Builds (or loads) the corpus index and starts serving it; the caller closes the server. */
export async function startMultihopSearchServer(
  options: { host?: string; port?: number; cacheDir?: string; dataSeed?: number } = {},
): Promise<SearchServer> {
  const { index } = loadMultihopResources(options);
  return startSearchServer(index, { host: options.host, port: options.port });
}

/**
 * Serves until SIGINT or SIGTERM (or `signal` aborts), then closes the server; resolves after closing.
 * `onStart` gets the running server (tests use it).
 */
export async function serveMultihopSearch(
  options: { host: string; port: number; cacheDir?: string },
  out: CliOutput,
  hooks: { signal?: AbortSignal; onStart?: (server: SearchServer) => void } = {},
): Promise<void> {
  const server = await startMultihopSearchServer(options);
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
