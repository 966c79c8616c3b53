/**
 * The wasm kernels' worker pool: results do not depend on the number of threads (bitwise), workers start
 * lazily (only for a large kernel), a process that used them exits on its own, and a kernel error in a
 * worker surfaces as a thrown error naming the kernel.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker as NodeWorker } from 'node:worker_threads';
import { afterAll, describe, expect, test } from 'vitest';
import {
  type Tensor,
  adamwUpdate,
  add,
  exp,
  gather,
  gelu,
  layerNorm,
  logSoftmax,
  logprobs,
  matmul,
  rmsNorm,
  scaledDotProductAttention,
  scatterAdd,
  softmax,
  tensor,
  tidy,
} from '../src/index.js';
import {
  disableWasmKernels,
  type WebWorkerGlobals,
  enableWasmKernels,
  setWasmCallCheck,
  setWasmThreadHost,
  shutdownWasmWorkers,
  waitForWasmWorkers,
  wasmSimdSupported,
  wasmWorkerInfo,
  webWorkerHost,
} from '../src/backend/wasm/index.js';
import { getWasmRuntime } from '../src/backend/wasm/runtime.js';
import { expectIdentical, f32, leaf, values } from './wasm-helpers.js';

/** Enables the kernels on `threads` threads and waits until its workers run. */
function useThreads(threads: number): void {
  enableWasmKernels({ threads });
  expect(waitForWasmWorkers(20000)).toBe(threads - 1);
}

/** Outputs and gradients of large enough ops that every wasm kernel splits its work over the threads. */
function workload(): Tensor[] {
  return tidy(() => {
    const out: Tensor[] = [];
    const a = f32([203, 157], 1);
    const b = f32([157, 131], 2);
    out.push(matmul(a, b));
    out.push(matmul(f32([6, 67, 40], 3), f32([6, 40, 53], 4)));
    const x = leaf(f32([301, 203], 5, 4));
    const w = leaf(f32([203], 6));
    const y = logSoftmax(gelu(layerNorm(x, w, w)));
    const targets = tensor(
      Int32Array.from({ length: 301 }, (_, i) => (i * 37) % 203),
      { shape: [301] },
    );
    const lp = logprobs(y.mul(3), targets);
    const r = rmsNorm(x, w);
    lp.sum()
      .add(
        softmax(x)
          .mul(f32([301, 203], 7))
          .sum(),
      )
      .add(r.mul(f32([301, 203], 16)).sum())
      .backward();
    out.push(y, lp, r, x.grad as Tensor, w.grad as Tensor, exp(x), add(x, w));
    // Rows enough for several chunks of the row driver (./src/backend/wasm/rows.ts).
    out.push(softmax(f32([1500, 203], 15, 4)));
    const q = leaf(f32([2, 4, 70, 24], 8));
    const k = leaf(f32([2, 2, 90, 24], 9));
    const att = scaledDotProductAttention(q, k, k, { causal: true });
    att.mul(f32(att.shape, 14)).sum().backward();
    out.push(att, q.grad as Tensor, k.grad as Tensor);
    const p = f32([9000], 10);
    const m = f32([9000], 11, 0.1);
    const v = f32([9000], 12, 0.1).abs();
    adamwUpdate(p, f32([9000], 13), m, v, { lr: 1e-3, step: 3 });
    out.push(p, m, v);
    // The copy head's reads and scatters over a vocabulary row (rows enough to be split over the threads).
    const vocab = leaf(f32([1000, 300], 17));
    const at = tensor(
      Int32Array.from({ length: 1000 * 90 }, (_, i) => (i * 7919) % 300),
      { shape: [1000, 90], dtype: 'int32' },
    );
    const picked = gather(vocab, 1, at);
    const spread = scatterAdd(vocab, 1, at, f32([1000, 90], 18));
    picked
      .mul(f32(picked.shape, 19))
      .sum()
      .add(spread.mul(f32(spread.shape, 20)).sum())
      .backward();
    out.push(picked, spread, vocab.grad as Tensor);
    return out.map((t) => t.detach());
  });
}

/**
 * Worker, Blob and URL as a page has them, built on worker_threads: a Blob URL names the script text, and
 * a worker runs it with `self` as its global and its first message delivered to `self.onmessage`.
 */
function webGlobalsOnNode(log: string[]): WebWorkerGlobals {
  const scripts = new Map<string, string>();
  class TextBlob {
    constructor(readonly parts: string[]) {}
  }
  class ShimWorker {
    private readonly worker: NodeWorker;
    constructor(url: string) {
      const script = scripts.get(url);
      if (script === undefined) throw new Error(`no script at ${url}`);
      const prelude = `globalThis.self = globalThis;
import('node:worker_threads').then(({ parentPort }) =>
  parentPort.once('message', (data) => self.onmessage({ data })));\n`;
      this.worker = new NodeWorker(prelude + script, { eval: true });
      this.worker.unref();
      log.push('spawn');
    }
    postMessage(data: unknown): void {
      this.worker.postMessage(data);
    }
    terminate(): void {
      log.push('terminate');
      void this.worker.terminate();
    }
  }
  return {
    Worker: ShimWorker,
    Blob: TextBlob,
    URL: {
      createObjectURL: (blob) => {
        const url = `blob:test/${scripts.size}`;
        scripts.set(url, (blob as TextBlob).parts.join(''));
        return url;
      },
      revokeObjectURL: (url) => {
        scripts.delete(url);
        log.push('revoke');
      },
    },
    navigator: { hardwareConcurrency: 3 },
    crossOriginIsolated: true,
    SharedArrayBuffer,
  };
}

describe.skipIf(!wasmSimdSupported())('wasm worker pool', () => {
  afterAll(() => {
    disableWasmKernels();
    shutdownWasmWorkers();
    enableWasmKernels({ threads: undefined });
    disableWasmKernels();
  });

  test('results are bitwise independent of the number of threads', () => {
    useThreads(1);
    const one = workload();
    for (const threads of [2, 3]) {
      useThreads(threads);
      const before = wasmWorkerInfo().sharedJobs;
      const many = workload();
      // matmul (2 calls), softmax, layer and RMS norm, logprobs, exp, attention, AdamW and backward
      // kernels: each a job shared with the workers.
      expect(wasmWorkerInfo().sharedJobs - before).toBeGreaterThanOrEqual(10);
      for (const [i, t] of one.entries()) expectIdentical(many[i], t, `threads=${threads} output ${i}`);
    }
  });

  test('workers start lazily: not for small kernels, on the first large one', () => {
    shutdownWasmWorkers();
    enableWasmKernels({ threads: 2 });
    expect(wasmWorkerInfo().started).toBe(false);
    tidy(() => matmul(f32([8, 8], 1), f32([8, 8], 2)).dataSync());
    expect(wasmWorkerInfo().started).toBe(false);
    tidy(() => matmul(f32([128, 128], 1), f32([128, 128], 2)).dataSync());
    expect(wasmWorkerInfo().started).toBe(true);
    expect(waitForWasmWorkers(20000)).toBe(1);
  });

  test('the Web Worker host runs the pool (on a worker_threads stand-in for Worker, Blob and URL)', () => {
    const log: string[] = [];
    const host = webWorkerHost(webGlobalsOnNode(log));
    expect(host?.hardwareThreads).toBe(3);
    useThreads(1);
    const one = workload();
    setWasmThreadHost(host);
    try {
      useThreads(3);
      const before = wasmWorkerInfo().sharedJobs;
      const many = workload();
      expect(wasmWorkerInfo().sharedJobs - before).toBeGreaterThanOrEqual(10);
      for (const [i, t] of one.entries()) expectIdentical(many[i], t, `web workers: output ${i}`);
      // Each worker's Blob URL is revoked once the worker has it; shutting down terminates both workers.
      expect(log).toEqual(['spawn', 'revoke', 'spawn', 'revoke']);
      shutdownWasmWorkers();
      expect(log.filter((e) => e === 'terminate')).toHaveLength(2);
    } finally {
      setWasmThreadHost(null);
    }
  });

  test('no Web Worker host without Worker or SharedArrayBuffer, or in a page without cross-origin isolation', () => {
    const env = webGlobalsOnNode([]);
    expect(webWorkerHost({ ...env, Worker: undefined })).toBeUndefined();
    expect(webWorkerHost({ ...env, SharedArrayBuffer: undefined })).toBeUndefined();
    expect(webWorkerHost({ ...env, crossOriginIsolated: false })).toBeUndefined();
    expect(webWorkerHost({ ...env, navigator: undefined })?.hardwareThreads).toBe(1);
  });

  test("a job's calls write disjoint memory and give the same results in reverse order", () => {
    // Threads run a job's calls at once: a shared scratch row or an overlapping output would be a race that
    // shows only under some timings. The call check runs them one by one on this thread with the split of
    // 3 threads, checking each thread's writes against the others', or in reverse order.
    useThreads(3);
    const split = wasmWorkerInfo().sharedJobs;
    const forward = workload();
    expect(wasmWorkerInfo().sharedJobs - split).toBeGreaterThanOrEqual(10);
    try {
      for (const mode of ['reverse', 'disjoint-writes'] as const) {
        setWasmCallCheck(mode);
        const before = wasmWorkerInfo().sharedJobs;
        const checked = workload();
        expect(wasmWorkerInfo().sharedJobs).toBe(before);
        for (const [i, t] of forward.entries()) expectIdentical(checked[i], t, `${mode}: output ${i}`);
      }
    } finally {
      setWasmCallCheck('off');
    }
  });

  test('the call check names the kernel and the calls when two threads would write the same memory', () => {
    useThreads(2);
    const rt = getWasmRuntime();
    const id = rt.id('softmax_0');
    const { base } = rt.scratch(1 << 16);
    rt.view().set(values(64, 3), base / 4);
    // Two calls of an in-place softmax on the same row: each changes it.
    const calls = [
      [id, base, base, 1, 64],
      [id, base, base, 1, 64],
    ];
    setWasmCallCheck('disjoint-writes');
    try {
      expect(() => rt.parallel('overlap-probe', calls)).toThrow(
        new RegExp(
          `wasm kernel 'overlap-probe': calls 0–0 and 1–1 of 2 \\(threads 0 and 1\\) both write byte ${base}`,
        ),
      );
    } finally {
      setWasmCallCheck('off');
    }
  });

  test('a kernel error in a worker is thrown, naming the kernel; the pool keeps working', () => {
    useThreads(2);
    const rt = getWasmRuntime();
    const id = rt.id('softmax_0');
    const { base } = rt.scratch(1 << 20);
    // The first call (the main thread's share) is valid; the second (the worker's) points far past the
    // memory. The main thread runs that share itself when the worker has not started it by then.
    const calls = [
      [id, base, base, 1, 64],
      [id, 0x7fff0000, 0, 1, 64],
    ];
    expect(() => rt.parallel('softmax-probe', calls)).toThrow(
      /wasm kernel 'softmax-probe' failed \((worker 0|main thread): .*out of bounds/,
    );
    // On the main thread too.
    expect(() => rt.parallel('softmax-probe', [calls[1]])).toThrow(
      /wasm kernel 'softmax-probe' failed \(main thread: .*out of bounds/,
    );
    const again = workload();
    expect(again.length).toBeGreaterThan(0);
    // A call with more arguments than a call-table row holds is refused, not truncated.
    expect(() => rt.parallel('too-long', [[id, ...new Array(14).fill(0)]])).toThrow(
      /wasm kernel 'too-long': a call passes more than 13 arguments/,
    );
  });

  test('a process that used the threaded kernels exits on its own', async () => {
    const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
    const script = [
      `import * as T from ${JSON.stringify(entry)};`,
      'T.enableWasmKernels({ threads: 2 });',
      'const a = T.ones([256, 256]);',
      'T.matmul(a, a).dataSync();',
      "if (T.waitForWasmWorkers(20000) !== 1) throw new Error('workers did not start');",
      "console.log('done', T.matmul(a, a).dataSync()[0]);",
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let doneAt = 0;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      if (stdout.includes('done') && doneAt === 0) doneAt = performance.now();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(null);
      }, 40000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(stderr).toBe('');
    expect(stdout.trim()).toBe('done 256');
    expect(code).toBe(0);
    // From its last output to its exit: no worker keeps it alive.
    expect(performance.now() - doneAt).toBeLessThan(3000);
  }, 60000);
});
