/**
 * The WebAssembly SIMD kernels against the plain TypeScript kernels they replace and against
 * @tensorflow/tfjs-backend-cpu, in one process on the same inputs: matmul 128/256/512 and softmax
 * [4096, 1024]. Run from the repository root:
 *
 *   npx tsx --conditions=@agent-r1/source benchmarks/src/wasm.ts [--quick]
 *
 * Prints one row per case and library (median ms, GFLOP/s, max |difference| to the TS kernel) and the
 * wasm/TS and wasm/tfjs speed ratios. Softmax is counted as 5 flops per element (max, subtract, exp as
 * one, sum, scale) and also reported in GB/s (read + write).
 */
import * as T from '@agent-r1/tensor';
import * as tfjs from './anchors/tfjs.js';
import { initTfjs } from './anchors/tfjs.js';
import { DEFAULT_OPTIONS, QUICK_OPTIONS, type Runner, maxAbsDiff, measure } from './harness.js';
import { type Input, ours, oursRunner, randn } from './inputs.js';

interface Case {
  name: string;
  flops: number;
  bytes: number;
  ours: () => Runner;
  tfjs: () => Runner;
}

function matmulCase(n: number): Case {
  const a = randn([n, n], n);
  const b = randn([n, n], n + 1);
  return {
    name: `matmul ${n}x${n}x${n}`,
    flops: 2 * n * n * n,
    bytes: 4 * 3 * n * n,
    ours: () => {
      const [ta, tb] = [ours(a), ours(b)];
      return oursRunner([ta, tb], () => T.matmul(ta, tb));
    },
    tfjs: () => tfjs.matmul(a, b),
  };
}

function softmaxCase(x: Input): Case {
  return {
    name: `softmax ${x.shape.join('x')}`,
    flops: 5 * x.data.length,
    bytes: 4 * 2 * x.data.length,
    ours: () => {
      const t = ours(x);
      return oursRunner([t], () => T.softmax(t));
    },
    tfjs: () => tfjs.softmax(x),
  };
}

const quick = process.argv.includes('--quick');
const options = quick ? QUICK_OPTIONS : DEFAULT_OPTIONS;
await initTfjs(false);
if (!T.wasmSimdSupported()) {
  console.error('WebAssembly SIMD is not supported here');
  process.exit(1);
}

const cases = [matmulCase(128), matmulCase(256), matmulCase(512), softmaxCase(randn([4096, 1024], 21, 3))];
const pad = (s: string, n: number) => s.padEnd(n);
console.log(`node ${process.version}, ${options === QUICK_OPTIONS ? 'quick' : 'default'} repetitions`);
console.log(
  `${pad('case', 26)}${pad('library', 8)}${pad('median ms', 12)}${pad('GFLOP/s', 10)}${pad('GB/s', 8)}max|diff| vs TS`,
);
for (const c of cases) {
  const results: Record<string, { ms: number; output: Float32Array }> = {};
  for (const lib of ['ts', 'wasm', 'tfjs'] as const) {
    if (lib === 'wasm') T.enableWasmKernels();
    else T.disableWasmKernels();
    const runner = lib === 'tfjs' ? c.tfjs() : c.ours();
    const m = measure(runner, options);
    runner.dispose();
    results[lib] = { ms: m.medianMs, output: m.output };
    const diff = lib === 'ts' ? '' : maxAbsDiff(m.output, results.ts.output).toExponential(1);
    console.log(
      `${pad(c.name, 26)}${pad(lib, 8)}${pad(m.medianMs.toFixed(2), 12)}${pad((c.flops / m.medianMs / 1e6).toFixed(2), 10)}${pad((c.bytes / m.medianMs / 1e6).toFixed(2), 8)}${diff}`,
    );
  }
  T.disableWasmKernels();
  const r = (x: string, y: string) => (results[y].ms / results[x].ms).toFixed(2);
  console.log(`${pad('', 26)}speed-up: wasm/TS ${r('wasm', 'ts')}x, wasm/tfjs ${r('wasm', 'tfjs')}x`);
}
