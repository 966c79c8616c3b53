/**
 * The kernel benchmark's cases, each with the same inputs for every library: ours (through the Tensor API,
 * so the registered kernels run), tfjs (whichever tfjs backend is selected: cpu or wasm) and onnxruntime-node
 * (an in-memory model, ./onnx.ts; absent where ONNX Runtime for Node has no training, i.e. the MLP backward).
 */
import * as T from '@agent-r1/tensor';
import * as ort from 'onnxruntime-node';
import * as tfjs from '../anchors/tfjs.js';
import type { Runner } from '../harness.js';
import { type Input, ours, oursRunner, randint, randn } from '../inputs.js';
import { mlpSuite } from '../suites/mlp.js';
import { causalAttentionModel, logprobsModel, matmulModel, softmaxModel } from './onnx.js';

/** A runner whose call may be asynchronous (ONNX Runtime's `run` is). */
export interface AsyncRunner {
  run(): ArrayLike<number> | Promise<ArrayLike<number>>;
  dispose(): void;
}

export interface KernelCase {
  name: string;
  shape: string;
  /** FLOPs or bytes per call. */
  work: number;
  unit: 'GFLOP/s' | 'GB/s';
  ours(): Runner;
  tfjs(): Runner;
  ort?(threads: number): Promise<AsyncRunner>;
}

const ortTensor = (x: Input) => new ort.Tensor('float32', x.data, x.shape);

/** Inputs made on first use: the parent process only needs the cases' names and work. */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

async function ortRunner(
  bytes: Uint8Array,
  feeds: Record<string, ort.Tensor>,
  threads: number,
): Promise<AsyncRunner> {
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return {
    async run() {
      const out = await session.run(feeds);
      return out.y.data as Float32Array;
    },
    dispose: () => void session.release(),
  };
}

function matmulCase(name: string, aShape: number[], bShape: number[], seed: number): KernelCase {
  const out = [...aShape.slice(0, -1), bShape[bShape.length - 1]];
  const K = aShape[aShape.length - 1];
  const inputs = lazy(() => [randn(aShape, seed), randn(bShape, seed + 1)] as const);
  return {
    name,
    shape: `${aShape.join('x')} @ ${bShape.join('x')}`,
    work: 2 * K * out.reduce((x, y) => x * y, 1),
    unit: 'GFLOP/s',
    ours: () => {
      const [ta, tb] = inputs().map((x) => ours(x));
      return oursRunner([ta, tb], () => T.matmul(ta, tb));
    },
    tfjs: () => tfjs.matmul(...inputs()),
    ort: (threads) => {
      const [a, b] = inputs();
      return ortRunner(matmulModel(aShape, bShape, out), { a: ortTensor(a), b: ortTensor(b) }, threads);
    },
  };
}

function softmaxCase(shape: number[]): KernelCase {
  const x = lazy(() => randn(shape, 21, 3));
  return {
    name: 'softmax',
    shape: shape.join('x'),
    work: 8 * shape[0] * shape[1],
    unit: 'GB/s',
    ours: () => {
      const t = ours(x());
      return oursRunner([t], () => T.softmax(t));
    },
    tfjs: () => tfjs.softmax(x()),
    ort: (threads) => ortRunner(softmaxModel(shape), { x: ortTensor(x()) }, threads),
  };
}

function logprobsCase(rows: number, vocab: number): KernelCase {
  const inputs = lazy(() => ({ logits: randn([rows, vocab], 22, 3), targets: randint(vocab, [rows], 23) }));
  return {
    name: 'logprobs',
    shape: `${rows}x${vocab}`,
    // Reads the logits once (what a fused kernel must move at least).
    work: 4 * rows * vocab,
    unit: 'GB/s',
    ours: () => {
      const { logits, targets } = inputs();
      const [tl, tt] = [ours(logits), ours(targets)];
      return oursRunner([tl, tt], () => T.logprobs(tl, tt));
    },
    tfjs: () => tfjs.logprobs(inputs().logits, inputs().targets),
    ort: (threads) => {
      const { logits, targets } = inputs();
      return ortRunner(
        logprobsModel(rows, vocab),
        {
          x: ortTensor(logits),
          t: new ort.Tensor('int64', BigInt64Array.from(targets.data, BigInt), [rows, 1]),
        },
        threads,
      );
    },
  };
}

function attentionCase(B: number, H: number, S: number, D: number): KernelCase {
  const qkv = lazy(() => [41, 42, 43].map((seed) => randn([B, H, S, D], seed)));
  return {
    name: 'causal_attention',
    shape: `B${B} H${H} S${S} D${D}`,
    // q·kᵀ and p·v over the full S×S (the usual count; causal kernels may skip half).
    work: 4 * B * H * S * S * D,
    unit: 'GFLOP/s',
    ours: () => {
      const [tq, tk, tv] = qkv().map((x) => ours(x));
      return oursRunner([tq, tk, tv], () => T.scaledDotProductAttention(tq, tk, tv, { causal: true }));
    },
    tfjs: () => {
      const [q, k, v] = qkv();
      return tfjs.causalAttention(q, k, v);
    },
    ort: (threads) => {
      const [q, k, v] = qkv();
      return ortRunner(
        causalAttentionModel(B, H, S, D),
        { q: ortTensor(q), k: ortTensor(k), v: ortTensor(v) },
        threads,
      );
    },
  };
}

function mlpCase(): KernelCase {
  const b = mlpSuite()[0];
  return {
    name: 'mlp_fwd_bwd',
    shape: b.shape,
    work: b.work.amount,
    unit: 'GFLOP/s',
    ours: () => b.setup.ours(),
    tfjs: () => b.setup.tfjs(),
  };
}

export function kernelCases(): KernelCase[] {
  return [
    ...[128, 256, 512, 1024].map((n) => matmulCase('matmul', [n, n], [n, n], n)),
    // Attention scores of a B4 H4 S256 D64 layer (q·kᵀ), and the MLP up-projection of 1024 tokens.
    matmulCase('batched_matmul', [16, 256, 64], [16, 64, 256], 7),
    matmulCase('linear', [1024, 256], [256, 1024], 9),
    softmaxCase([4096, 1024]),
    logprobsCase(4096, 8192),
    attentionCase(4, 4, 256, 64),
    mlpCase(),
  ];
}
