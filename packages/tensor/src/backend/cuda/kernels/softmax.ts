/**
 * Fused row kernels over the last axis: softmax / log-softmax forward and backward, and logprobs (the
 * log-softmax at one target per row, with the row's log-sum-exp saved) forward and backward. One block per
 * row; each pass streams the row from global memory (L2 keeps it for the next pass). Formulas are the CPU
 * backend's (cpu/softmax.ts), including -Infinity rows. float16 and bfloat16 rows are read as float and
 * computed in float; each stored result is rounded once, and logprobs saves its log-sum-exp in float.
 */
import type { DType } from '../../../dtype.js';
import { LOGPROBS_GRAD, LOG_SOFTMAX, LOG_SUM_EXP, softmaxFunctions } from '../../../kernel-ir/rows.js';
import type { View } from '../../backend.js';
import { type Launcher, assertDense, assertStatsDtype, ptrOf, rowsOf, sameDtype } from '../launcher.js';
import { type KernelSource, source, storageTypes } from './common.js';
import { ROW_THREADS, blockReducers, rowFunctions, rowsDtypeCheck } from './rows.js';

/** Code computing `lse` of row `xr` (width W); every thread ends with it. Needs LOG_SUM_EXP's function. */
function lseOfRow(dtype: DType): string {
  const { c, T, ld } = storageTypes(dtype);
  const inf = c === 'float32' ? 'ar1_inf_f()' : 'ar1_inf_d()';
  return `${T} mx = -${inf};
  for (long long j = threadIdx.x; j < W; j += blockDim.x) { ${T} v = ${ld('xr[j]')}; mx = v > mx ? v : mx; }
  mx = ar1_block_max(mx);
  ${T} sum = (${T})0;
  if (mx != -${inf}) for (long long j = threadIdx.x; j < W; j += blockDim.x) sum += ${c === 'float32' ? 'expf' : 'exp'}(${ld('xr[j]')} - mx);
  sum = ar1_block_sum(sum);
  ${T} lse = ${LOG_SUM_EXP.name}(mx, sum);`;
}

export function softmaxKernel(dtype: DType, log: boolean): KernelSource {
  rowsDtypeCheck('softmax', dtype, true);
  const { c, S, ld, st } = storageTypes(dtype);
  const name = `ar1_${log ? 'log_' : ''}softmax_${dtype}`;
  const { at } = softmaxFunctions(log);
  const body = `${blockReducers(c)}
${rowFunctions(c, LOG_SUM_EXP, at)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ out, const ${S}* __restrict__ x, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${S}* xr = x + r * W;
    ${lseOfRow(dtype)}
    for (long long j = threadIdx.x; j < W; j += blockDim.x) out[r * W + j] = ${st(`${at.name}(${ld('xr[j]')}, lse)`)};
  }
}`;
  return source(name, body);
}

export function softmaxBackwardKernel(dtype: DType, log: boolean): KernelSource {
  rowsDtypeCheck('softmaxBackward', dtype, true);
  const { c, S, T, ld, st } = storageTypes(dtype);
  const name = `ar1_${log ? 'log_' : ''}softmax_backward_${dtype}`;
  const [yj, gj] = [ld('y[j]'), ld('g[j]')];
  const { dot: term, grad } = softmaxFunctions(log);
  const body = `${blockReducers(c)}
${rowFunctions(c, term, grad)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ dx, const ${S}* __restrict__ yAll, const ${S}* __restrict__ gAll, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${S}* y = yAll + r * W;
    const ${S}* g = gAll + r * W;
    ${T} dot = (${T})0;
    for (long long j = threadIdx.x; j < W; j += blockDim.x) dot += ${term.name}(${yj}, ${gj});
    dot = ar1_block_sum(dot);
    for (long long j = threadIdx.x; j < W; j += blockDim.x) dx[r * W + j] = ${st(`${grad.name}(${yj}, ${gj}, dot)`)};
  }
}`;
  return source(name, body);
}

export function logprobsKernel(dtype: DType): KernelSource {
  rowsDtypeCheck('logprobs', dtype, true);
  const { c, S, T, ld, st } = storageTypes(dtype);
  const name = `ar1_logprobs_${dtype}`;
  const body = `${blockReducers(c)}
${rowFunctions(c, LOG_SUM_EXP, LOG_SOFTMAX)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ out, ${T}* __restrict__ lseOut, const ${S}* __restrict__ x, const int* __restrict__ targets, long long rows, long long W, int* err) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${S}* xr = x + r * W;
    ${lseOfRow(dtype)}
    if (threadIdx.x == 0) {
      int t = targets[r];
      lseOut[r] = lse;
      if (t < 0 || t >= W) { atomicExch(err, 3); out[r] = ${st('0')}; }
      else out[r] = ${st(`${LOG_SOFTMAX.name}(${ld('xr[t]')}, lse)`)};
    }
  }
}`;
  return source(name, body);
}

export function logprobsBackwardKernel(dtype: DType): KernelSource {
  rowsDtypeCheck('logprobsBackward', dtype, true);
  const { c, S, T, ld, st } = storageTypes(dtype);
  const name = `ar1_logprobs_backward_${dtype}`;
  const body = `${rowFunctions(c, LOGPROBS_GRAD)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ dx, const ${S}* __restrict__ x, const int* __restrict__ targets, const ${T}* __restrict__ lse, const ${S}* __restrict__ grad, long long rows, long long W) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    ${T} z = lse[r], g = ${ld('grad[r]')};
    int t = targets[r];
    for (long long j = threadIdx.x; j < W; j += blockDim.x) {
      ${T} v = ${LOGPROBS_GRAD.name}(${ld('x[r * W + j]')}, z, g);
      dx[r * W + j] = ${st('j == t ? v + g : v')};
    }
  }
}`;
  return source(name, body);
}

// ---- launchers ----

function rowGrid(rows: number, L: Launcher): number {
  return Math.max(1, Math.min(rows, L.multiprocessors * 16));
}

export function launchSoftmax(L: Launcher, x: View, out: View, log: boolean): void {
  assertDense('softmax', x);
  const [rows, W] = rowsOf(x);
  if (rows === 0) return;
  L.launch(softmaxKernel(x.dtype, log), [rowGrid(rows, L)], ROW_THREADS, [
    ['ptr', ptrOf(out)],
    ['ptr', ptrOf(x)],
    ['i64', rows],
    ['i64', W],
  ]);
}

export function launchSoftmaxBackward(L: Launcher, y: View, dy: View, dx: View, log: boolean): void {
  assertDense('softmaxBackward', y, dy);
  sameDtype('softmaxBackward', y, dy, dx);
  const [rows, W] = rowsOf(y);
  if (rows === 0) return;
  L.launch(softmaxBackwardKernel(y.dtype, log), [rowGrid(rows, L)], ROW_THREADS, [
    ['ptr', ptrOf(dx)],
    ['ptr', ptrOf(y)],
    ['ptr', ptrOf(dy)],
    ['i64', rows],
    ['i64', W],
  ]);
}

export function launchLogprobs(L: Launcher, logits: View, targets: View, out: View, lse: View): void {
  assertDense('logprobs', logits, targets);
  if (targets.dtype !== 'int32')
    throw new Error(`cuda logprobs: targets must be int32, got ${targets.dtype}`);
  sameDtype('logprobs', logits, out);
  assertStatsDtype('logprobs', logits, { lse });
  const [rows, W] = rowsOf(logits);
  if (rows === 0) return;
  L.launch(logprobsKernel(logits.dtype), [rowGrid(rows, L)], ROW_THREADS, [
    ['ptr', ptrOf(out)],
    ['ptr', ptrOf(lse)],
    ['ptr', ptrOf(logits)],
    ['ptr', ptrOf(targets)],
    ['i64', rows],
    ['i64', W],
    ['ptr', L.errorWord],
  ]);
}

export function launchLogprobsBackward(
  L: Launcher,
  logits: View,
  targets: View,
  lse: View,
  grad: View,
  dlogits: View,
): void {
  assertDense('logprobsBackward', logits, targets, lse, grad);
  sameDtype('logprobsBackward', logits, grad, dlogits);
  assertStatsDtype('logprobsBackward', logits, { lse });
  const [rows, W] = rowsOf(logits);
  if (rows === 0) return;
  L.launch(logprobsBackwardKernel(logits.dtype), [rowGrid(rows, L)], ROW_THREADS, [
    ['ptr', ptrOf(dlogits)],
    ['ptr', ptrOf(logits)],
    ['ptr', ptrOf(targets)],
    ['ptr', ptrOf(lse)],
    ['ptr', ptrOf(grad)],
    ['i64', rows],
    ['i64', W],
  ]);
}
