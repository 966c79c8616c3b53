/**
 * The WebGPU backend against @tensorflow/tfjs-backend-webgpu, both on one Dawn GPUDevice in one process,
 * on the same inputs: matmul (256, 512, 1024; 2048 with --large), softmax [4096, 1024], logprobs
 * [4096, 8192] (tfjs: logSoftmax + gather, it has no fused kernel) and causal attention [1, 8, 512, 64]
 * (tfjs: matmul, softmax, matmul). Run from the repository root (on a machine without a GPU, first
 * `source scripts/webgpu-env.sh`):
 *
 *   npx tsx --conditions=@agent-r1/source benchmarks/src/webgpu.ts [--quick] [--large] [--only=softmax]
 *
 * Each case is timed two ways: "sync" waits for the queue to drain (no readback), "read" includes copying
 * the result to the host. Prints median ms, GFLOP/s (matmul, attention) or GB/s (softmax, logprobs: bytes
 * read + written once), max |difference| between the libraries, and ours/tfjs speed ratios.
 */
import * as T from '@agent-r1/tensor';
import * as tf from '@tensorflow/tfjs-core';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { create, globals } from 'webgpu';
import { type Input, type IntInput, randint, randn } from './inputs.js';

// tfjs-backend-webgpu reads WebGPU's constants (GPUBufferUsage, GPUMapMode, …) from globals and checks for
// navigator.gpu before it accepts a device (Node 20 has no navigator). Kept referenced: Dawn aborts if collected.
Object.assign(globalThis, globals);
const navigatorGpu = create([]);
if (!('navigator' in globalThis) || !(globalThis as { navigator?: { gpu?: unknown } }).navigator?.gpu)
  Object.defineProperty(globalThis, 'navigator', { value: { gpu: navigatorGpu }, configurable: true });

const quick = process.argv.includes('--quick');
const large = process.argv.includes('--large');
const minMs = quick ? 200 : 1500;
const maxReps = quick ? 3 : 20;

const gpu = await T.requestWebGpuDevice();
const device = gpu.device;
const ours = await T.createWebGpuBackend({ device });
T.registerBackend('webgpu', ours);
// Under its own name, where its kernels are registered, but on our device instead of one it would request.
if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
tf.registerBackend('webgpu', () => new WebGPUBackend(device));
tf.enableProdMode();
await tf.setBackend('webgpu');
await tf.ready();
const tfBackend = tf.backend() as unknown as { endComputePassEncoder(): void; submitQueue(): void };

type Mode = 'sync' | 'read';
interface Lib {
  /** Runs the op once; the returned promise settles when the result is done (sync) or read (read). */
  run(mode: Mode): Promise<Float32Array | null>;
  dispose(): void;
}

function oursLib(inputs: T.Tensor[], fn: () => T.Tensor): Lib {
  return {
    async run(mode) {
      const out = T.tidy(fn);
      try {
        if (mode === 'read') return (await out.data()) as Float32Array;
        await ours.sync();
        return null;
      } finally {
        out.dispose();
      }
    },
    dispose: () => T.dispose(inputs),
  };
}

function tfLib(inputs: tf.Tensor[], fn: () => tf.Tensor): Lib {
  return {
    async run(mode) {
      const out = tf.tidy(fn);
      try {
        if (mode === 'read') return (await out.data()) as Float32Array;
        tfBackend.endComputePassEncoder();
        tfBackend.submitQueue();
        await device.queue.onSubmittedWorkDone();
        return null;
      } finally {
        out.dispose();
      }
    },
    dispose: () => tf.dispose(inputs),
  };
}

const oursT = (x: Input | IntInput) => T.tensor(x.data, { shape: x.shape, device: 'webgpu' });
const tfT = (x: Input | IntInput) =>
  tf.tensor(x.data, x.shape, x.data instanceof Int32Array ? 'int32' : 'float32');

interface Case {
  name: string;
  /** Work per call and its unit. */
  work: number;
  unit: 'GFLOP/s' | 'GB/s';
  ours: () => Lib;
  tfjs: () => Lib;
}

function matmulCase(n: number): Case {
  const a = randn([n, n], n);
  const b = randn([n, n], n + 1);
  return {
    name: `matmul ${n}`,
    work: 2 * n * n * n,
    unit: 'GFLOP/s',
    ours: () => {
      const [ta, tb] = [oursT(a), oursT(b)];
      return oursLib([ta, tb], () => T.matmul(ta, tb));
    },
    tfjs: () => {
      const [ta, tb] = [tfT(a), tfT(b)];
      return tfLib([ta, tb], () => tf.matMul(ta, tb));
    },
  };
}

function softmaxCase(rows: number, cols: number): Case {
  const x = randn([rows, cols], 21, 3);
  return {
    name: `softmax ${rows}x${cols}`,
    work: 8 * rows * cols,
    unit: 'GB/s',
    ours: () => {
      const t = oursT(x);
      return oursLib([t], () => T.softmax(t, -1));
    },
    tfjs: () => {
      const t = tfT(x);
      return tfLib([t], () => tf.softmax(t));
    },
  };
}

function logprobsCase(rows: number, vocab: number): Case {
  const x = randn([rows, vocab], 31, 3);
  const targets = randint(vocab, [rows], 32);
  return {
    name: `logprobs ${rows}x${vocab}`,
    work: 4 * rows * vocab,
    unit: 'GB/s',
    ours: () => {
      const [t, y] = [oursT(x), oursT(targets)];
      return oursLib([t, y], () => T.logprobs(t, y));
    },
    tfjs: () => {
      const t = tfT(x);
      const flat = tf.tensor1d(
        Array.from(targets.data, (v, row) => row * vocab + v),
        'int32',
      );
      return tfLib([t, flat], () => tf.gather(tf.reshape(tf.logSoftmax(t), [rows * vocab]), flat));
    },
  };
}

function attentionCase(B: number, H: number, L: number, D: number): Case {
  const [q, k, v] = [41, 42, 43].map((s) => randn([B, H, L, D], s));
  const scale = 1 / Math.sqrt(D);
  return {
    name: `attention ${B}x${H}x${L}x${D}`,
    // Causal: about half of the 2·2·L²·D flops of QKᵀ and PV are needed.
    work: 2 * B * H * L * L * D,
    unit: 'GFLOP/s',
    ours: () => {
      const ts = [q, k, v].map(oursT);
      return oursLib(ts, () => T.scaledDotProductAttention(ts[0], ts[1], ts[2], { causal: true }));
    },
    tfjs: () => {
      const ts = [q, k, v].map(tfT);
      const bias = new Float32Array(L * L);
      for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) bias[i * L + j] = -1e9;
      const tb = tf.tensor2d(bias, [L, L]);
      return tfLib([...ts, tb], () =>
        tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(ts[0], ts[1], false, true), scale), tb)), ts[2]),
      );
    },
  };
}

/**
 * Times both libraries on one case, alternating a call of each per repetition, so load from other processes
 * on a shared machine falls on both alike; returns each one's median.
 */
async function timePair(libs: Record<'ours' | 'tfjs', Lib>, mode: Mode) {
  const outs = { ours: await libs.ours.run(mode), tfjs: await libs.tfjs.run(mode) }; // warm-up: compile, fill pools
  const times: Record<'ours' | 'tfjs', number[]> = { ours: [], tfjs: [] };
  const start = performance.now();
  while (times.ours.length < 3 || (times.ours.length < maxReps && performance.now() - start < minMs)) {
    for (const name of ['ours', 'tfjs'] as const) {
      const t0 = performance.now();
      await libs[name].run(mode);
      times[name].push(performance.now() - t0);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: { ours: median(times.ours), tfjs: median(times.tfjs) }, outs, reps: times.ours.length };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const cases = [
  matmulCase(256),
  matmulCase(512),
  matmulCase(1024),
  ...(large ? [matmulCase(2048)] : []),
  softmaxCase(4096, 1024),
  logprobsCase(4096, 8192),
  attentionCase(1, 8, 512, 64),
];
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const selected = only ? cases.filter((c) => c.name.includes(only)) : cases;
const pad = (s: string, n: number) => s.padEnd(n);
console.log(`adapter: ${gpu.description}; node ${process.version}; tfjs ${tf.version_core}`);
console.log(
  `${pad('case', 26)}${pad('library', 8)}${pad('mode', 6)}${pad('median ms', 12)}${pad('rate', 16)}${pad('reps', 6)}max|diff|`,
);
for (const c of selected) {
  const libs = { ours: c.ours(), tfjs: c.tfjs() };
  const ratios: string[] = [];
  for (const mode of ['sync', 'read'] as const) {
    const m = await timePair(libs, mode);
    for (const name of ['ours', 'tfjs'] as const) {
      const rate = (c.work / m.ms[name] / 1e6).toFixed(2);
      const diff =
        name === 'tfjs' && mode === 'read' ? maxAbsDiff(m.outs.tfjs!, m.outs.ours!).toExponential(1) : '';
      console.log(
        `${pad(c.name, 26)}${pad(name, 8)}${pad(mode, 6)}${pad(m.ms[name].toFixed(2), 12)}${pad(`${rate} ${c.unit}`, 16)}${pad(String(m.reps), 6)}${diff}`,
      );
    }
    ratios.push(`${mode} ${(m.ms.tfjs / m.ms.ours).toFixed(2)}x`);
  }
  libs.ours.dispose();
  libs.tfjs.dispose();
  console.log(`${pad('', 26)}ours/tfjs speed-up: ${ratios.join(', ')}`);
}
process.exit(0);
