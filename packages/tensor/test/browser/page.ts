/**
 * Runs in a browser page (bundled by ./chromium.ts): the package index loads, the wasm SIMD kernels run on
 * the page's main thread and on a Web Worker over shared memory, and their results are compared with the
 * TypeScript kernels and across thread counts. Exposes `runBrowserChecks()` on the page's global object.
 */
import {
  type Tensor,
  disableWasmKernels,
  enableWasmKernels,
  gelu,
  layerNorm,
  logprobs,
  matmul,
  scaledDotProductAttention,
  softmax,
  tensor,
  tidy,
  wasmSimdSupported,
  wasmWorkerInfo,
} from '../../src/index.js';
import { values } from '../values.js';

export interface BrowserReport {
  simd: boolean;
  crossOriginIsolated: boolean;
  /** Workers ready after the first threaded run. */
  readyWorkers: number;
  /** Jobs the 2-thread run shared with the worker. */
  sharedJobs: number;
  /** Per output: the largest |wasm − TypeScript| difference, and its scale (the largest |TypeScript|). */
  outputs: { name: string; maxDiff: number; maxAbs: number }[];
  /** Whether the 1-thread and 2-thread wasm outputs are bitwise equal. */
  sameOnTwoThreads: boolean;
}

const f32 = (shape: number[], seed: number, scale = 1) =>
  tensor(
    values(
      shape.reduce((a, b) => a * b, 1),
      seed,
      scale,
    ),
    { shape },
  );

/** Large enough that every kernel here splits over the threads; returns named outputs' values. */
function workload(): [string, Float32Array][] {
  return tidy(() => {
    const x = f32([301, 203], 1, 3);
    const w = f32([203], 2);
    const targets = tensor(
      Int32Array.from({ length: 301 }, (_, i) => (i * 37) % 203),
      { shape: [301] },
    );
    const q = f32([2, 4, 70, 24], 3);
    const k = f32([2, 2, 90, 24], 4);
    const kept = tensor(
      Array.from({ length: 2 * 70 * 90 }, (_, i) => i % 90 < 10 + (Math.floor(i / 90) % 80)),
      { shape: [2, 1, 70, 90], dtype: 'bool' },
    );
    const outputs: [string, Tensor][] = [
      ['matmul', matmul(f32([203, 157], 5), f32([157, 131], 6))],
      ['softmax', softmax(x)],
      ['layerNorm+gelu', gelu(layerNorm(x, w, w))],
      ['logprobs', logprobs(x, targets)],
      ['attention (causal)', scaledDotProductAttention(q, k, k, { causal: true })],
      ['attention (prefix mask)', scaledDotProductAttention(q, k, k, { mask: kept })],
    ];
    return outputs.map(([name, t]) => [name, t.dataSync() as Float32Array]);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runBrowserChecks(): Promise<BrowserReport> {
  disableWasmKernels();
  const reference = workload();
  enableWasmKernels({ threads: 1 });
  const one = workload();
  enableWasmKernels({ threads: 2 });
  workload(); // starts the worker; the main thread runs everything until it reports ready
  for (let i = 0; i < 1000 && wasmWorkerInfo().ready < 1; i++) await sleep(10);
  const readyWorkers = wasmWorkerInfo().ready;
  const before = wasmWorkerInfo().sharedJobs;
  const two = workload();
  const sharedJobs = wasmWorkerInfo().sharedJobs - before;
  disableWasmKernels();
  const outputs = reference.map(([name, want], i) => {
    let maxDiff = 0;
    let maxAbs = 0;
    one[i][1].forEach((got, j) => {
      maxDiff = Math.max(maxDiff, Math.abs(got - want[j]));
      maxAbs = Math.max(maxAbs, Math.abs(want[j]));
    });
    return { name, maxDiff, maxAbs };
  });
  const sameOnTwoThreads = one.every(([, a], i) => a.every((v, j) => Object.is(v, two[i][1][j])));
  return {
    simd: wasmSimdSupported(),
    crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    readyWorkers,
    sharedJobs,
    outputs,
    sameOnTwoThreads,
  };
}

(globalThis as { runBrowserChecks?: typeof runBrowserChecks }).runBrowserChecks = runBrowserChecks;
