/**
 * Every kernel source the backend can generate, for representative parameters: each dtype each kernel
 * accepts, each rank bucket, both index widths, each operand layout and tile shape of matmul, each head
 * bucket of attention. The compile check (test/cuda-kernels.test.ts) builds all of them with nvcc, so a
 * machine without a GPU still proves that what the backend would hand NVRTC compiles.
 */
import type { DType } from '../../../dtype.js';
import { BINARY_OPS, type ReduceOp, UNARY_OPS } from '../../backend.js';
import {
  attentionDeltaKernel,
  attentionDkvKernel,
  attentionDqKernel,
  attentionForwardKernel,
  attentionSupported,
  HEAD_BUCKETS,
} from './attention.js';
import { type IndexBits, type KernelSource, RANK_BUCKETS } from './common.js';
import {
  supportsBinary,
  binaryKernel,
  copyKernel,
  fillKernel,
  supportsUnary,
  unaryKernel,
  whereKernel,
} from './elementwise.js';
import { gatherKernel, scatterAddKernel } from './indexing.js';
import { BATCH_BUCKETS, type Layout, MATMUL_TILES, matmulKernel } from './matmul.js';
import { normBackwardKernel, normKernel, normParamGradKernel, normParamRoundKernel } from './norms.js';
import { adamwKernel } from './optim.js';
import { randomKernel } from './random.js';
import { type ReduceMode, reduceKernel } from './reduce.js';
import { rotaryKernel } from './rotary.js';
import { logprobsBackwardKernel, logprobsKernel, softmaxBackwardKernel, softmaxKernel } from './softmax.js';

const DTYPES: DType[] = ['float32', 'float64', 'int32', 'bool'];
const FLOATS: DType[] = ['float32', 'float64'];
/** Stored as bits, computed in float: the kernels of CUDA_HALF_KERNELS (kernels.ts) take them. */
const HALVES: DType[] = ['float16', 'bfloat16'];
const BITS: IndexBits[] = [32, 64];
const REDUCE_OPS: ReduceOp[] = ['sum', 'prod', 'max', 'min', 'argmax', 'argmin'];

function reduceOutput(op: ReduceOp, input: DType): DType {
  if (op === 'argmax' || op === 'argmin') return 'int32';
  return op === 'sum' && input === 'bool' ? 'int32' : input;
}

/** Softmax, logprobs, the norms and attention (each head bucket with a tile), forward and backward. */
function fusedKernels(dtype: DType): KernelSource[] {
  const out: KernelSource[] = [];
  for (const log of [false, true]) out.push(softmaxKernel(dtype, log), softmaxBackwardKernel(dtype, log));
  out.push(logprobsKernel(dtype), logprobsBackwardKernel(dtype));
  for (const centred of [true, false])
    out.push(normKernel(dtype, centred), normBackwardKernel(dtype, centred));
  out.push(normParamGradKernel(dtype), attentionDeltaKernel(dtype));
  for (const dmax of HEAD_BUCKETS.filter((d) => attentionSupported(dtype, d)))
    out.push(
      attentionForwardKernel(dtype, dmax),
      attentionDqKernel(dtype, dmax),
      attentionDkvKernel(dtype, dmax),
    );
  return out;
}

export function kernelCatalog(): KernelSource[] {
  const out: KernelSource[] = [];
  // Each dtype: every op at one rank (the ranks the launchers pick for a contiguous or a broadcast
  // operand); the rank buckets and 64-bit indexing once each, on float32.
  for (const dtype of DTYPES) {
    out.push(fillKernel(dtype, 1, 32), fillKernel(dtype, 8, 64));
    for (const to of DTYPES) out.push(copyKernel(dtype, to, 1, 32));
    out.push(whereKernel(dtype, 2, 32));
    for (const op of UNARY_OPS) if (supportsUnary(op, dtype)) out.push(unaryKernel(op, dtype, 1, 32));
    for (const op of BINARY_OPS) if (supportsBinary(op, dtype)) out.push(binaryKernel(op, dtype, 2, 32));
  }
  for (const half of HALVES) {
    out.push(fillKernel(half, 1, 32), whereKernel(half, 2, 32), gatherKernel(half, 2, 32));
    for (const op of UNARY_OPS) if (supportsUnary(op, half)) out.push(unaryKernel(op, half, 1, 32));
    for (const op of BINARY_OPS) out.push(binaryKernel(op, half, 2, 32));
    out.push(...fusedKernels(half), normParamRoundKernel(half));
    for (const other of [...DTYPES, ...HALVES])
      out.push(copyKernel(half, other, 1, 32), copyKernel(other, half, 1, 32));
  }
  for (const rank of RANK_BUCKETS)
    for (const bits of BITS) {
      out.push(copyKernel('float32', 'float32', rank, bits));
      out.push(binaryKernel('add', 'float32', rank, bits));
    }
  for (const input of [...DTYPES, ...HALVES])
    for (const op of REDUCE_OPS)
      for (const mode of (input === 'float32' ? ['block', 'thread'] : ['block']) as ReduceMode[])
        out.push(
          reduceKernel({
            op,
            input,
            output: reduceOutput(op, input),
            outerRank: 1,
            innerRank: 1,
            mode,
            bits: 32,
          }),
        );
  for (const outerRank of RANK_BUCKETS)
    for (const innerRank of [1, 2, 4])
      if (outerRank === 1 || innerRank === 1 || outerRank === innerRank)
        out.push(
          reduceKernel({
            op: 'sum',
            input: 'float32',
            output: 'float32',
            outerRank,
            innerRank,
            mode: 'block',
            bits: 64,
          }),
        );
  const layouts: Layout[] = ['n', 't', 's'];
  for (const a of layouts)
    for (const b of layouts)
      out.push(matmulKernel({ dtype: 'float32', a, b, batchRank: 1, tiles: MATMUL_TILES.small }));
  for (const batchRank of BATCH_BUCKETS) {
    out.push(matmulKernel({ dtype: 'float32', a: 'n', b: 'n', batchRank, tiles: MATMUL_TILES.large }));
    out.push(matmulKernel({ dtype: 'float32', a: 'n', b: 't', batchRank, tiles: MATMUL_TILES.small }));
  }
  out.push(matmulKernel({ dtype: 'float64', a: 'n', b: 'n', batchRank: 1, tiles: MATMUL_TILES.double }));
  for (const half of HALVES)
    for (const tiles of [MATMUL_TILES.small, MATMUL_TILES.large])
      out.push(matmulKernel({ dtype: half, a: 'n', b: 't', batchRank: 1, tiles }));
  out.push(matmulKernel({ dtype: 'int32', a: 't', b: 's', batchRank: 2, tiles: MATMUL_TILES.small }));
  for (const dtype of ['float32', 'float64', 'int32'] as DType[])
    out.push(gatherKernel(dtype, 1, 32), scatterAddKernel(dtype, 1, 32));
  for (const rank of RANK_BUCKETS)
    out.push(gatherKernel('float32', rank, 64), scatterAddKernel('float32', rank, 32));
  out.push(gatherKernel('bool', 2, 32));
  for (const dtype of FLOATS)
    out.push(
      ...fusedKernels(dtype),
      rotaryKernel(dtype, false),
      rotaryKernel(dtype, true),
      adamwKernel(dtype),
    );
  for (const dtype of ['float32', 'float64', 'int32'] as DType[])
    for (const dist of ['uniform', 'normal', 'randint'] as const) out.push(randomKernel(dist, dtype));
  // Some parameter sets above overlap (e.g. matmul 'nt' with one batch axis); keep each kernel once.
  return [...new Map(out.map((k) => [k.name, k])).values()];
}
