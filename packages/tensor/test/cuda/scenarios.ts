/**
 * Representative calls of every primitive of the cuda kernel table, run against the Recorder: each dtype
 * a kernel accepts, strided/broadcast/transposed views, batched matmul, masks and GQA in attention, empty
 * and size-1 shapes. Used by the launch test (argument lists vs kernel signatures) and by the nvcc compile
 * test (every kernel these calls pick must compile).
 */
import { type DType, statsDtype } from '../../src/dtype.js';
import { BINARY_OPS, type Kernels, UNARY_OPS } from '../../src/backend/backend.js';
import { supportsBinary, supportsUnary } from '../../src/backend/cuda/kernels/elementwise.js';
import { cudaKernels } from '../../src/backend/cuda/kernels.js';
import { Recorder, restride } from './recorder.js';

export function runScenarios(): Recorder {
  const R = new Recorder();
  const K: Kernels = cudaKernels(R);
  const dtypes: DType[] = ['float32', 'float64', 'int32', 'bool'];
  for (const dtype of dtypes) {
    const a = R.view(dtype, [3, 5]);
    const out = R.view(dtype, [3, 5]);
    K.fill(out, 1);
    K.fill(restride(R.view(dtype, [10, 5]), [5, 5], [10, 1], 3), 0);
    for (const to of dtypes) K.copy(a, R.view(to, [3, 5]));
    K.copy(restride(a, [5, 3], [1, 5]), R.view(dtype, [5, 3]));
    for (const op of UNARY_OPS) if (supportsUnary(op, dtype)) K.unary(op, a, R.view(dtype, [3, 5]));
    for (const op of BINARY_OPS) {
      if (!supportsBinary(op, dtype)) continue;
      const outType = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(op) ? 'bool' : dtype;
      // b broadcast along the first axis (stride 0).
      K.binary(op, a, restride(R.view(dtype, [5]), [3, 5], [0, 1]), R.view(outType, [3, 5]));
    }
    K.where(R.view('bool', [3, 5]), a, restride(R.view(dtype, [1]), [3, 5], [0, 0]), R.view(dtype, [3, 5]));
    const x = R.view(dtype, [2, 3, 4, 5]);
    K.reduce('max', x, [1, 3], R.view(dtype, [2, 1, 4, 1]));
    K.reduce('sum', x, [3], R.view(dtype === 'bool' ? 'int32' : dtype, [2, 3, 4, 1]));
    K.reduce('argmin', x, [2], R.view('int32', [2, 3, 1, 5]));
    K.reduce('prod', R.view(dtype, [4000, 8]), [1], R.view(dtype, [4000, 1]));
    K.gather(x, 2, R.view('int32', [2, 3, 7, 5]), R.view(dtype, [2, 3, 7, 5]));
    if (dtype !== 'bool') K.scatterAdd(x, 1, R.view('int32', [2, 2, 4, 5]), R.view(dtype, [2, 2, 4, 5]));
  }
  // gather moves half bits as they are (an embedding lookup on a half table).
  for (const half of ['float16', 'bfloat16'] as DType[])
    K.gather(R.view(half, [50, 8]), 0, R.view('int32', [6, 8]), R.view(half, [6, 8]));
  // High-rank strided walk (rank 7 → bucket 8), and an empty one.
  const hi = R.view('float32', [2, 3, 2, 3, 2, 3, 2]);
  K.unary(
    'exp',
    restride(hi, [2, 3, 2, 3, 2, 3, 2], [1, 2, 6, 12, 36, 72, 216]),
    R.view('float32', hi.shape),
  );
  K.unary('exp', R.view('float32', [0, 4]), R.view('float32', [0, 4]));
  K.reduce('sum', R.view('float32', [3, 0]), [1], R.view('float32', [3, 1]));
  for (const dtype of ['float32', 'float64', 'int32'] as DType[]) {
    const a = R.view(dtype, [4, 33, 17]);
    const b = R.view(dtype, [4, 17, 9]);
    K.matmul(a, b, R.view(dtype, [4, 33, 9]));
    // Transposed B (a weight used as xWᵀ) broadcast over the batch.
    K.matmul(a, restride(R.view(dtype, [9, 17]), [4, 17, 9], [0, 1, 17]), R.view(dtype, [4, 33, 9]));
    // Two batch axes, transposed A.
    K.matmul(
      restride(R.view(dtype, [2, 3, 17, 33]), [2, 3, 33, 17], [1683, 561, 1, 33]),
      R.view(dtype, [2, 3, 17, 9]),
      R.view(dtype, [2, 3, 33, 9]),
    );
  }
  K.matmul(R.view('float32', [1024, 512]), R.view('float32', [512, 1024]), R.view('float32', [1024, 1024]));
  // The row kernels, norms and attention take the half types too; what they save for the backward (mean,
  // rstd, log-sum-exp) is in statsDtype, float32 for those.
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16'] as DType[]) {
    const x = R.view(dtype, [6, 50]);
    const stats = (shape: number[]) => R.view(statsDtype(dtype), shape);
    for (const log of [false, true]) {
      K.softmax(x, R.view(dtype, [6, 50]), log);
      K.softmaxBackward(x, R.view(dtype, [6, 50]), R.view(dtype, [6, 50]), log);
    }
    K.logprobs(x, R.view('int32', [6]), R.view(dtype, [6]), stats([6]));
    K.logprobsBackward(x, R.view('int32', [6]), stats([6]), R.view(dtype, [6]), R.view(dtype, [6, 50]));
    for (const [norm, back] of [
      [K.layerNorm, K.layerNormBackward],
      [K.rmsNorm, K.rmsNormBackward],
    ] as const) {
      const w = R.view(dtype, [50]);
      norm({
        x,
        weight: w,
        bias: dtype === 'float64' ? null : R.view(dtype, [50]),
        eps: 1e-5,
        out: R.view(dtype, [6, 50]),
        mean: stats([6]),
        rstd: stats([6]),
      });
      back({
        x,
        weight: w,
        mean: stats([6]),
        rstd: stats([6]),
        dy: R.view(dtype, [6, 50]),
        dx: R.view(dtype, [6, 50]),
        dweight: R.view(dtype, [50]),
        dbias: dtype === 'bfloat16' ? R.view(dtype, [50]) : null,
      });
    }
    if (dtype === 'float32' || dtype === 'float64')
      for (const transpose of [false, true])
        K.rotary({
          x: R.view(dtype, [2, 3, 5, 8]),
          cos: R.view(dtype, [2, 5, 8]),
          sin: R.view(dtype, [2, 5, 8]),
          out: R.view(dtype, [2, 3, 5, 8]),
          transpose,
        });
    if (dtype === 'float32' || dtype === 'float64')
      K.adamw({
        param: R.view(dtype, [77]),
        grad: R.view(dtype, [77]),
        m: R.view(dtype, [77]),
        v: R.view(dtype, [77]),
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0.01,
        step: 3,
      });
    for (const D of dtype === 'float64' ? [16, 64, 100] : [16, 64, 100, 256]) {
      const [B, H, Hkv, T, S] = [2, 4, 2, 7, 11];
      const q = R.view(dtype, [B, H, T, D]);
      const k = R.view(dtype, [B, Hkv, S, D]);
      const v = R.view(dtype, [B, Hkv, S, D]);
      const mask = restride(R.view('bool', [T, S]), [B, H, T, S], [0, 0, S, 1]);
      const out = R.view(dtype, [B, H, T, D]);
      const lse = stats([B, H, T]);
      K.attention({ q, k, v, mask, causal: true, scale: 0.125, out, lse });
      K.attentionBackward({
        q,
        k,
        v,
        mask: null,
        causal: false,
        scale: 0.125,
        out,
        lse,
        dout: R.view(dtype, [B, H, T, D]),
        dq: R.view(dtype, q.shape),
        dk: R.view(dtype, k.shape),
        dv: R.view(dtype, v.shape),
      });
    }
  }
  for (const dtype of ['float32', 'float64', 'int32'] as DType[])
    for (const distribution of ['uniform', 'normal', 'randint'] as const)
      K.random(R.view(dtype, [1000]), { distribution, key: [1, 2], counter: 2 ** 33 + 5, a: 0, b: 10 });
  return R;
}
