/**
 * The kernel benchmark: matmul 128..1024, a transformer-shaped batched matmul and linear layer, softmax
 * [4096x1024], logprobs [4096x8192], causal attention B4 H4 S256 D64, and forward+backward of a small MLP,
 * side by side for ours (TypeScript kernels; wasm SIMD kernels on 1 and 2 threads), tfjs-backend-cpu,
 * tfjs-backend-wasm (SIMD, 1 and 2 threads) and onnxruntime-node (intra-op threads 1 and 2):
 *
 *   cd benchmarks && npx tsx --conditions=@agent-r1/source src/kernels.ts [--quick] [--out file.json]
 *
 * Each library configuration lives in its own child process (tfjs picks its wasm binary once per process),
 * all started at once and idle between requests; the parent measures one case at a time, in rounds that
 * visit every library in turn, so a change in the machine's load (it is shared) spreads over all of them
 * instead of favouring whichever ran at a quiet moment. Same seeded inputs everywhere. Prints a table of
 * rates (GFLOP/s or GB/s from the median time; higher is better) and the targets of issue 3, and writes all
 * medians to JSON (default results/kernels.json). Outputs are checked against ours-TS on their first 256
 * values (max |difference| in the JSON).
 */
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '@agent-r1/tensor';
import { type AsyncRunner, type KernelCase, kernelCases } from './kernels/cases.js';

const LIBRARIES = [
  'ts',
  'wasm-1',
  'wasm-2',
  'tfjs-cpu',
  'tfjs-wasm-1',
  'tfjs-wasm-2',
  'ort-1',
  'ort-2',
] as const;
type Library = (typeof LIBRARIES)[number];

interface CaseResult {
  name: string;
  shape: string;
  unit: string;
  medianMs: number | null;
  rate: number | null;
  reps: number;
  head: number[];
  error?: string;
}

interface LibraryRun {
  library: Library;
  info: string;
  results: CaseResult[];
}

const SAMPLE = 256;

/** A library slower than this per call on a case is timed in one round only. */
const SLOW_MS = 2000;
/** Each visit of a round times calls for about this long. */
const ROUND_MS = 150;

/** The child's side: times `runner` for about ROUND_MS (at least one call, at most 20). */
async function timeRound(runner: AsyncRunner): Promise<number[]> {
  const times: number[] = [];
  const start = performance.now();
  while (times.length < 20 && (times.length === 0 || performance.now() - start < ROUND_MS)) {
    const t0 = performance.now();
    await runner.run();
    times.push(performance.now() - t0);
  }
  return times;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Selects the library in this (child) process; returns a line describing it. */
async function setUp(library: Library): Promise<string> {
  if (library === 'ts') {
    T.disableWasmKernels();
    return 'TypeScript kernels';
  }
  if (library.startsWith('wasm-')) {
    const threads = Number(library.slice(5));
    T.enableWasmKernels({ threads });
    const ready = T.waitForWasmWorkers(30000);
    return `wasm SIMD kernels, ${ready + 1} thread(s)`;
  }
  if (library.startsWith('tfjs')) {
    const { registerTfjsGradients } = await import('./anchors/tfjs-gradients.js');
    await registerTfjsGradients();
    const tf = await import('@tensorflow/tfjs-core');
    if (library === 'tfjs-cpu') {
      const { initTfjs } = await import('./anchors/tfjs.js');
      await initTfjs(false);
      return `tfjs-backend-cpu ${tf.version_core}`;
    }
    const { initTfjsWasm } = await import('./kernels/tfjs-wasm.js');
    const threads = await initTfjsWasm(Number(library.slice(10)));
    return `tfjs-backend-wasm ${tf.version_core} SIMD, threads reported: ${threads}`;
  }
  return `onnxruntime-node, intraOpNumThreads ${library.slice(4)}`;
}

async function runnerFor(library: Library, c: KernelCase): Promise<AsyncRunner | undefined> {
  if (library.startsWith('ort')) return c.ort?.(Number(library.slice(4)));
  return library.startsWith('tfjs') ? c.tfjs() : c.ours();
}

type Request =
  | { type: 'start'; index: number }
  | { type: 'round'; index: number }
  | { type: 'stop'; index: number };
type Reply = { head?: number[]; firstMs?: number; times?: number[]; error?: string };

/** A child process: sets up its library, then answers the parent's requests until told to exit. */
async function child(library: Library): Promise<void> {
  const send = (m: unknown) => (process.send as (m: unknown) => void)(m);
  const info = await setUp(library);
  const cases = kernelCases();
  let runner: AsyncRunner | undefined;
  process.on('message', async (msg: Request | { type: 'exit' }) => {
    if (msg.type === 'exit') process.exit(0);
    const reply: Reply = {};
    try {
      if (msg.type === 'start') {
        runner = await runnerFor(library, cases[msg.index]);
        if (!runner) reply.error = 'not available';
        else {
          // The first call (also the warm-up) gives the output sample.
          const t0 = performance.now();
          reply.head = Array.from((await runner.run()) as ArrayLike<number>).slice(0, SAMPLE);
          reply.firstMs = performance.now() - t0;
        }
      } else if (msg.type === 'round') {
        if (runner) reply.times = await timeRound(runner);
      } else {
        runner?.dispose();
        runner = undefined;
      }
    } catch (error) {
      reply.error = (error instanceof Error ? error.message : String(error)).slice(0, 200);
    }
    send(reply);
  });
  send({ info });
}

interface Worker {
  library: Library;
  info: string;
  ask(m: Request | { type: 'exit' }): Promise<Reply>;
}

function startChild(self: string, library: Library): Promise<Worker> {
  const proc = fork(self, ['--child', library], {
    execArgv: ['--import', 'tsx', '--conditions=@agent-r1/source'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let pending: ((r: Reply) => void) | undefined;
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${library} exited (${code}) before it was ready`)));
    proc.once('message', (first: { info: string }) => {
      proc.on('message', (r: Reply) => pending?.(r));
      resolve({
        library,
        info: first.info,
        ask: (m) =>
          new Promise((done) => {
            pending = done;
            proc.send(m);
          }),
      });
    });
  });
}

async function parent(quick: boolean, out: string, only: string[] | null, rounds: number): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const started = new Date();
  const started_ = await Promise.allSettled(LIBRARIES.map((library) => startChild(self, library)));
  const workers: Worker[] = [];
  started_.forEach((r, i) => {
    if (r.status === 'fulfilled') workers.push(r.value);
    else
      process.stderr.write(`${LIBRARIES[i]}: ${r.reason instanceof Error ? r.reason.message : r.reason}\n`);
  });
  const runs: LibraryRun[] = workers.map((w) => ({ library: w.library, info: w.info, results: [] }));
  const cases = kernelCases();
  for (const [index, c] of cases.entries()) {
    if (only && !only.includes(c.name)) continue;
    process.stderr.write(`${c.name} ${c.shape}\n`);
    const base = { name: c.name, shape: c.shape, unit: c.unit };
    const state = await Promise.all(
      workers.map(async (w) => ({ w, start: await w.ask({ type: 'start', index }), times: [] as number[] })),
    );
    for (let round = 0; round < rounds; round++)
      for (const s of state) {
        if (s.start.error || (round > 0 && (s.start.firstMs ?? 0) > SLOW_MS)) continue;
        const r = await s.w.ask({ type: 'round', index });
        if (r.error) s.start.error = r.error;
        else s.times.push(...(r.times ?? []));
      }
    for (const [k, s] of state.entries()) {
      await s.w.ask({ type: 'stop', index });
      const ms = s.times.length > 0 ? median(s.times) : null;
      runs[k].results.push({
        ...base,
        medianMs: ms,
        rate: ms === null ? null : c.work / ms / 1e6,
        reps: s.times.length,
        head: s.start.head ?? [],
        ...(s.start.error ? { error: s.start.error } : {}),
      });
    }
  }
  for (const w of workers) void w.ask({ type: 'exit' });
  report(runs, started, quick, out);
}

function maxDiff(a: number[], b: number[]): number | null {
  if (a.length === 0 || b.length === 0) return null;
  let worst = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function report(runs: LibraryRun[], started: Date, quick: boolean, out: string): void {
  const cpu = os.cpus();
  const machine = `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, node ${process.version}`;
  console.log(
    `${machine}; ${started.toISOString()}; ${quick ? 'quick: 1 round' : 'rounds interleaving the libraries'}`,
  );
  for (const r of runs) console.log(`  ${r.library}: ${r.info}`);
  const ts = runs.find((r) => r.library === 'ts');
  const cases = runs[0]?.results ?? [];
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`\n${pad('case', 38)}${runs.map((r) => pad(r.library, 12)).join('')}`);
  cases.forEach((c, i) => {
    const cells = runs.map((r) => {
      const x = r.results[i];
      return pad(x?.rate != null ? x.rate.toFixed(2) : 'n/a', 12);
    });
    console.log(`${pad(`${c.name} ${c.shape} (${c.unit})`, 38)}${cells.join('')}`);
  });
  const rate = (lib: Library, name: string, shape?: string) =>
    runs
      .find((r) => r.library === lib)
      ?.results.find((x) => x.name === name && (!shape || x.shape.startsWith(shape)))?.rate ?? null;
  const ratio = (x: number | null, y: number | null) => (x !== null && y !== null ? x / y : null);
  const fmt = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(2)}x`);
  const mm = ratio(rate('wasm-2', 'matmul', '512x'), rate('tfjs-wasm-2', 'matmul', '512x'));
  console.log(
    `\ntarget matmul(512) ≥ 0.5x tfjs-backend-wasm with threads: wasm-2 / tfjs-wasm-2 = ${fmt(mm)}`,
  );
  for (const name of ['softmax', 'logprobs']) {
    const r1 = ratio(rate('wasm-1', name), rate('ort-1', name));
    const r2 = ratio(rate('wasm-2', name), rate('ort-2', name));
    console.log(
      `target ${name} within 2x of onnxruntime (rate ratio ≥ 0.5): 1 thread ${fmt(r1)}, 2 threads ${fmt(r2)}`,
    );
  }
  const body = {
    machine,
    date: started.toISOString(),
    quick,
    runs: runs.map((r) => ({
      ...r,
      results: r.results.map(({ head, ...x }) => ({
        ...x,
        maxAbsDiffVsTs: maxDiff(
          head,
          ts?.results.find((t) => t.name === x.name && t.shape === x.shape)?.head ?? [],
        ),
      })),
    })),
  };
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(body, null, 2)}\n`);
  console.log(`\nwrote ${out}`);
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const value = (flag: string) => {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
};
const only = value('--only')?.split(',') ?? null;
const childLibrary = value('--child') as Library | undefined;
const rounds = Number(value('--rounds') ?? (quick ? 1 : 5));
if (childLibrary) await child(childLibrary);
else
  await parent(
    quick,
    value('--out') ?? fileURLToPath(new URL('../results/kernels.json', import.meta.url)),
    only,
    rounds,
  );
