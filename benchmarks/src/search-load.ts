/**
 * A bounded load on the multi-hop search service (`agent-r1 serve-search`), on loopback only:
 *
 *   npm run bench:search-load -w @agent-r1/benchmarks -- [--requests 2000] [--concurrency 20]
 *     [--single 100] [--health-ms 50] [--url http://127.0.0.1:PORT] [--limit-s 180]
 *
 * Without `--url` it starts the service over the built-in corpus in a child process (as `serve-search`
 * does), so the load generator and the server each have their own event loop. The queries are the built-in
 * test questions, in order, cycled. It first sends `--single` requests one at a time (the unloaded
 * latency), then `--requests` requests from `--concurrency` clients, while one more client asks
 * `GET /health` every `--health-ms` ms. It prints requests per second, p50 / p99 / max latency, errors,
 * and the /health latency under the load. Every request has a 30 s timeout, and the whole run stops after
 * `--limit-s` seconds.
 */
import { fork } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadMultihopResources, startMultihopSearchServer } from '@agent-r1/agent';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '20' },
    single: { type: 'string', default: '100' },
    'health-ms': { type: 'string', default: '50' },
    url: { type: 'string' },
    'limit-s': { type: 'string', default: '180' },
    serve: { type: 'boolean', default: false },
  },
  strict: true,
});

if (values.serve) {
  // The child: serve the built-in corpus on an ephemeral loopback port and tell the parent where.
  const server = await startMultihopSearchServer({ host: '127.0.0.1', port: 0 });
  process.send?.({ url: server.url });
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
} else {
  await main();
}

function count(name: string, min: number): number {
  const n = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return n;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function summary(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const f = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));
  return `p50 ${f(quantile(s, 0.5))} ms, p99 ${f(quantile(s, 0.99))} ms, max ${f(s[s.length - 1] ?? Number.NaN)} ms`;
}

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; ok: boolean }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, ok: res.ok };
  } catch {
    return { ms: performance.now() - t0, ok: false };
  }
}

async function startChild(): Promise<{ url: string; stop: () => void }> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) =>
      reject(new Error(`the search service exited (code ${code}) before listening`)),
    );
  });
  return { url, stop: () => child.connected && child.disconnect() };
}

async function main(): Promise<void> {
  const requests = count('requests', 1);
  const concurrency = count('concurrency', 1);
  const single = count('single', 0);
  const healthMs = count('health-ms', 1);
  const limitMs = count('limit-s', 1) * 1000;
  const deadline = Date.now() + limitMs;
  const queries = loadMultihopResources().dataset.questions.test.map((q) => q.question);
  const body = (i: number) => JSON.stringify({ query: queries[i % queries.length], k: 3 });

  const child = values.url === undefined ? await startChild() : undefined;
  const base = (values.url ?? child?.url ?? '').replace(/\/+$/, '');
  const host = new URL(base).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]')
    throw new Error(`search-load targets loopback only, got ${base}`);
  const post = (i: number) =>
    timed(`${base}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(i),
    });

  try {
    const warm = await timed(`${base}/health`);
    if (!warm.ok) throw new Error(`GET ${base}/health failed`);
    for (let i = 0; i < 10; i++) await post(i);

    const one: number[] = [];
    for (let i = 0; i < single && Date.now() < deadline; i++) one.push((await post(i)).ms);

    const latencies: number[] = [];
    const health: number[] = [];
    let errors = 0;
    let healthErrors = 0;
    let next = 0;
    let loading = true;
    const t0 = performance.now();
    const client = async () => {
      while (next < requests && Date.now() < deadline) {
        const r = await post(next++);
        latencies.push(r.ms);
        if (!r.ok) errors++;
      }
    };
    const prober = async () => {
      while (loading) {
        const r = await timed(`${base}/health`);
        health.push(r.ms);
        if (!r.ok) healthErrors++;
        await new Promise((res) => setTimeout(res, healthMs));
      }
    };
    const probing = prober();
    await Promise.all(Array.from({ length: concurrency }, client));
    const seconds = (performance.now() - t0) / 1000;
    loading = false;
    await probing;

    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    console.log(`search-load: ${base}, Node ${process.version}, ${availableParallelism()} cores (${cpu})`);
    console.log(`queries: ${queries.length} built-in test questions, k = 3, cycled`);
    if (one.length > 0) console.log(`one client, ${one.length} requests: ${summary(one)}`);
    console.log(
      `concurrency ${concurrency}, ${latencies.length} requests in ${seconds.toFixed(2)} s: ` +
        `${(latencies.length / seconds).toFixed(1)} req/s, ${summary(latencies)}, ${errors} errors`,
    );
    console.log(
      `GET /health during the load, ${health.length} probes: ${summary(health)}, ${healthErrors} errors`,
    );
    if (latencies.length < requests) console.log(`stopped at --limit-s after ${latencies.length} requests`);
  } finally {
    child?.stop();
  }
}
