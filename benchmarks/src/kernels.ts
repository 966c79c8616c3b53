/**
 * The kernel benchmark: matmul 128..1024, a transformer-shaped batched matmul and linear layer, softmax
 * [4096x1024], logprobs [4096x8192], causal attention B4 H4 S256 D64, and forward+backward of a small MLP,
 * side by side for ours (TypeScript kernels; wasm SIMD kernels on 1 and 2 threads), tfjs-backend-cpu,
 * tfjs-backend-wasm (SIMD, 1 and 2 threads) and onnxruntime-node (intra-op threads 1 and 2):
 *
 *   cd benchmarks && npx tsx --conditions=@agent-r1/source src/kernels.ts [--quick] [--out file.json]
 *
 * Each library configuration runs in its own child process, one after the other (tfjs picks its wasm
 * binary once per process), on the same seeded inputs. Prints a table of rates (GFLOP/s or GB/s; higher is
 * better) and the targets of issue 3, and writes all medians to JSON (default results/kernels.json).
 * Outputs are checked against ours-TS on their first 256 values (max |difference| in the JSON).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '@agent-r1/tensor';
import { DEFAULT_OPTIONS, type MeasureOptions, QUICK_OPTIONS } from './harness.js';
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

/** Calls slower than this are timed once more only (the plain-JavaScript libraries on the large cases). */
const SLOW_MS = 2000;

async function measureAsync(runner: AsyncRunner, options: MeasureOptions) {
  const first = performance.now();
  const head = Array.from((await runner.run()) as ArrayLike<number>).slice(0, SAMPLE);
  if (performance.now() - first > SLOW_MS) options = { ...options, maxWarmup: 1, minReps: 1, minTimeMs: 0 };
  const warmStart = performance.now();
  for (let w = 1; w < options.maxWarmup && performance.now() - warmStart < options.warmupMs; w++)
    await runner.run();
  const times: number[] = [];
  const start = performance.now();
  while (
    times.length < options.maxReps &&
    (times.length < options.minReps || performance.now() - start < options.minTimeMs)
  ) {
    const t0 = performance.now();
    await runner.run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const medianMs = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  return { medianMs, reps: times.length, head };
}

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

async function child(library: Library, options: MeasureOptions, only: string[] | null): Promise<void> {
  const info = await setUp(library);
  const results: CaseResult[] = [];
  for (const c of kernelCases()) {
    if (only && !only.includes(c.name)) continue;
    const base = { name: c.name, shape: c.shape, unit: c.unit };
    try {
      const runner = await runnerFor(library, c);
      if (!runner) {
        results.push({ ...base, medianMs: null, rate: null, reps: 0, head: [], error: 'not available' });
        continue;
      }
      const m = await measureAsync(runner, options);
      runner.dispose();
      results.push({
        ...base,
        medianMs: m.medianMs,
        rate: c.work / m.medianMs / 1e6,
        reps: m.reps,
        head: m.head,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      results.push({ ...base, medianMs: null, rate: null, reps: 0, head: [], error: message.slice(0, 200) });
    }
  }
  process.stdout.write(`${JSON.stringify({ library, info, results } satisfies LibraryRun)}\n`);
  // tfjs-wasm's pthreads and ONNX Runtime's thread pool keep a process alive; the results are written.
  process.exit(0);
}

function maxDiff(a: number[], b: number[]): number | null {
  if (a.length === 0 || b.length === 0) return null;
  let worst = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function parent(quick: boolean, out: string, only: string[] | null): void {
  const self = fileURLToPath(import.meta.url);
  const runs: LibraryRun[] = [];
  const started = new Date();
  for (const library of LIBRARIES) {
    const args = ['--import', 'tsx', '--conditions=@agent-r1/source', self, '--child', library];
    if (quick) args.push('--quick');
    if (only) args.push('--only', only.join(','));
    process.stderr.write(`running ${library}...\n`);
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26, timeout: 1_800_000 });
    const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
    if (!line) {
      process.stderr.write(`${library} failed:\n${r.stderr.slice(-2000)}\n`);
      continue;
    }
    runs.push(JSON.parse(line) as LibraryRun);
  }
  const cpu = os.cpus();
  const machine = `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, node ${process.version}`;
  console.log(`${machine}; ${started.toISOString()}; ${quick ? 'quick' : 'default'} repetitions`);
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
const options: MeasureOptions = quick
  ? QUICK_OPTIONS
  : { ...DEFAULT_OPTIONS, maxWarmup: 2, minReps: 3, minTimeMs: 500, maxReps: 40 };
if (childLibrary) await child(childLibrary, options, only);
else
  parent(quick, value('--out') ?? fileURLToPath(new URL('../results/kernels.json', import.meta.url)), only);
