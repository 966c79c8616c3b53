/** The primitive table of the cuda backend: each entry hands its views to a family's launcher. */
import type { KernelName, Kernels } from '../backend.js';
import type { Launcher } from './launcher.js';
import { launchAttention, launchAttentionBackward } from './kernels/attention.js';
import { launchBinary, launchCopy, launchFill, launchUnary, launchWhere } from './kernels/elementwise.js';
import { launchGather, launchScatterAdd } from './kernels/indexing.js';
import { launchMatmul } from './kernels/matmul.js';
import { launchNorm, launchNormBackward } from './kernels/norms.js';
import { launchAdamw } from './kernels/optim.js';
import { launchRandom } from './kernels/random.js';
import { launchReduce } from './kernels/reduce.js';
import { launchRotary } from './kernels/rotary.js';
import {
  launchLogprobs,
  launchLogprobsBackward,
  launchSoftmax,
  launchSoftmaxBackward,
} from './kernels/softmax.js';

/**
 * The kernels that take float16/bfloat16 views themselves, computing in float and rounding each stored
 * result once: the conversions, the elementwise maps (unary, binary, where), the reductions, matmul (half
 * tiles, float accumulators), softmax, logprobs, the norms and attention (their saved statistics in float),
 * and gather, which moves bits (an embedding lookup reads only its rows, not a float32 copy of the table).
 * The others (scatterAdd, rotary, adamw, random) compute on float32 copies (../half-compute.ts).
 */
export const CUDA_HALF_KERNELS: ReadonlySet<KernelName> = new Set([
  'fill',
  'copy',
  'where',
  'unary',
  'binary',
  'reduce',
  'matmul',
  'gather',
  'softmax',
  'softmaxBackward',
  'logprobs',
  'logprobsBackward',
  'layerNorm',
  'layerNormBackward',
  'rmsNorm',
  'rmsNormBackward',
  'attention',
  'attentionBackward',
]);

export function cudaKernels(L: Launcher): Kernels {
  return {
    fill: (out, value) => launchFill(L, out, value),
    copy: (src, dst) => launchCopy(L, src, dst),
    unary: (op, x, out) => launchUnary(L, op, x, out),
    binary: (op, a, b, out) => launchBinary(L, op, a, b, out),
    where: (cond, a, b, out) => launchWhere(L, cond, a, b, out),
    reduce: (op, x, axes, out) => launchReduce(L, op, x, axes, out),
    matmul: (a, b, out) => launchMatmul(L, a, b, out),
    gather: (x, dim, index, out) => launchGather(L, x, dim, index, out),
    scatterAdd: (dst, dim, index, src) => launchScatterAdd(L, dst, dim, index, src),
    softmax: (x, out, log) => launchSoftmax(L, x, out, log),
    softmaxBackward: (y, dy, dx, log) => launchSoftmaxBackward(L, y, dy, dx, log),
    logprobs: (logits, targets, out, lse) => launchLogprobs(L, logits, targets, out, lse),
    logprobsBackward: (logits, targets, lse, grad, dlogits) =>
      launchLogprobsBackward(L, logits, targets, lse, grad, dlogits),
    layerNorm: (args) => launchNorm(L, args, true),
    layerNormBackward: (args) => launchNormBackward(L, args, true),
    rmsNorm: (args) => launchNorm(L, args, false),
    rmsNormBackward: (args) => launchNormBackward(L, args, false),
    attention: (args) => launchAttention(L, args),
    attentionBackward: (args) => launchAttentionBackward(L, args),
    rotary: (args) => launchRotary(L, args),
    adamw: (args) => launchAdamw(L, args),
    random: (out, args) => launchRandom(L, out, args),
  };
}
