/**
 * layer_norm (centred) and rms_norm (not centred), forward and backward, as the CPU backend defines them
 * (cpu/norms.ts). Forward and dx: one block per row. dweight/dbias: column sums over rows, split across a
 * 2-D grid (columns × row chunks) whose partial sums meet with atomicAdd in buffers zeroed beforehand.
 * float16 and bfloat16 rows are read as float and computed in float, with mean and rstd saved in float
 * (statsDtype); their parameter gradients meet in float scratch and are rounded once at the end.
 */
import { type DType, bytesPerElement, isHalf } from '../../../dtype.js';
import { NORM_GRAD, NORM_RSTD, NORM_XHAT } from '../../../kernel-ir/rows.js';
import type { LayerNormArgs, LayerNormBackwardArgs, View } from '../../backend.js';
import { type Launcher, assertDense, assertStatsDtype, ptrOf, ptrOrNull, sameDtype } from '../launcher.js';
import { type KernelSource, computeType, source, storageTypes } from './common.js';
import { ROW_THREADS, blockReducers, rowFunctions, rowsDtypeCheck } from './rows.js';

export const NORM_COLUMN_THREADS = 256;
/** Rows summed by one block of the dweight/dbias kernel before its atomicAdd. */
export const NORM_ROWS_PER_BLOCK = 64;

export function normKernel(dtype: DType, centred: boolean): KernelSource {
  rowsDtypeCheck(centred ? 'layerNorm' : 'rmsNorm', dtype, true);
  const { c, S, T, ld, st } = storageTypes(dtype);
  const name = `ar1_${centred ? 'layer' : 'rms'}_norm_${dtype}`;
  const body = `${blockReducers(c)}
${rowFunctions(c, NORM_RSTD, NORM_XHAT)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ y, ${T}* __restrict__ meanOut, ${T}* __restrict__ rstdOut, const ${S}* __restrict__ x, const ${S}* __restrict__ w, const ${S}* __restrict__ b, long long rows, long long D, double eps) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${S}* xr = x + r * D;
    ${T} m = (${T})0;
    ${
      centred
        ? `for (long long j = threadIdx.x; j < D; j += blockDim.x) m += ${ld('xr[j]')};
    m = ar1_block_sum(m) / (${T})D;`
        : ''
    }
    ${T} v = (${T})0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) { ${T} d = ${ld('xr[j]')} - m; v += d * d; }
    v = ar1_block_sum(v);
    ${T} inv = ${NORM_RSTD.name}(v, (${T})D, (${T})eps);
    if (threadIdx.x == 0) { meanOut[r] = m; rstdOut[r] = inv; }
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
      ${T} z = ${NORM_XHAT.name}(${ld('xr[j]')}, m, inv);
      if (w) z *= ${ld('w[j]')};
      if (b) z += ${ld('b[j]')};
      y[r * D + j] = ${st('z')};
    }
  }
}`;
  return source(name, body);
}

export function normBackwardKernel(dtype: DType, centred: boolean): KernelSource {
  rowsDtypeCheck(centred ? 'layerNormBackward' : 'rmsNormBackward', dtype, true);
  const { c, S, T, ld, st } = storageTypes(dtype);
  const name = `ar1_${centred ? 'layer' : 'rms'}_norm_backward_${dtype}`;
  // Element j's normalised value and its gradient through the weight, read by both passes over the row.
  const terms = `${T} xhat = ${NORM_XHAT.name}(${ld('xr[j]')}, m, inv);
      ${T} gy = ${ld('gr[j]')} * (w ? ${ld('w[j]')} : (${T})1);`;
  const body = `${blockReducers(c)}
${rowFunctions(c, NORM_XHAT, NORM_GRAD)}
extern "C" __global__ void __launch_bounds__(${ROW_THREADS}) ${name}(${S}* __restrict__ dx, const ${S}* __restrict__ x, const ${S}* __restrict__ w, const ${T}* __restrict__ mean, const ${T}* __restrict__ rstd, const ${S}* __restrict__ dy, long long rows, long long D) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const ${S}* xr = x + r * D;
    const ${S}* gr = dy + r * D;
    ${T} m = mean[r], inv = rstd[r];
    ${centred ? `${T} sumG = (${T})0;` : ''}
    ${T} sumGX = (${T})0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
      ${terms}
      ${centred ? 'sumG += gy;' : ''}
      sumGX += gy * xhat;
    }
    ${centred ? 'sumG = ar1_block_sum(sumG);' : ''}
    sumGX = ar1_block_sum(sumGX);
    ${T} meanG = ${centred ? `sumG / (${T})D` : `(${T})0`};
    ${T} meanGX = sumGX / (${T})D;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
      ${terms}
      dx[r * D + j] = ${st(`${NORM_GRAD.name}(gy, xhat, inv, meanG, meanGX)`)};
    }
  }
}`;
  return source(name, body);
}

/**
 * dweight[j] += Σ dy·xhat and dbias[j] += Σ dy over this block's rows (either output may be null), in the
 * compute type: for the half types they are float scratch, rounded afterwards by normParamRoundKernel.
 */
export function normParamGradKernel(dtype: DType): KernelSource {
  rowsDtypeCheck('normBackward', dtype, true);
  const { c, S, T, ld } = storageTypes(dtype);
  const name = `ar1_norm_param_grad_${dtype}`;
  const body = `${rowFunctions(c, NORM_XHAT)}
extern "C" __global__ void __launch_bounds__(${NORM_COLUMN_THREADS}) ${name}(${T}* dw, ${T}* db, const ${S}* __restrict__ x, const ${T}* __restrict__ mean, const ${T}* __restrict__ rstd, const ${S}* __restrict__ dy, long long rows, long long D) {
  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= D) return;
  long long r0 = (long long)blockIdx.y * ${NORM_ROWS_PER_BLOCK};
  long long r1 = r0 + ${NORM_ROWS_PER_BLOCK} < rows ? r0 + ${NORM_ROWS_PER_BLOCK} : rows;
  ${T} sw = (${T})0, sb = (${T})0;
  for (long long r = r0; r < r1; r++) {
    ${T} g = ${ld('dy[r * D + j]')};
    sw += g * ${NORM_XHAT.name}(${ld('x[r * D + j]')}, mean[r], rstd[r]);
    sb += g;
  }
  if (dw) atomicAdd(dw + j, sw);
  if (db) atomicAdd(db + j, sb);
}`;
  return source(name, body);
}

/** out[j] = acc[j] rounded to the half type, for n elements: the parameter gradients' last step. */
export function normParamRoundKernel(dtype: DType): KernelSource {
  if (!isHalf(dtype)) throw new Error(`cuda normParamRound: expected float16 or bfloat16, got ${dtype}`);
  const { S, st } = storageTypes(dtype);
  const name = `ar1_norm_param_round_${dtype}`;
  const body = `extern "C" __global__ void ${name}(${S}* __restrict__ out, const float* __restrict__ acc, long long n) {
  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) out[j] = ${st('acc[j]')};
}`;
  return source(name, body);
}

// ---- launchers ----

function normRows(x: View): [number, number] {
  const D = x.shape[x.shape.length - 1];
  const n = x.shape.reduce((a, b) => a * b, 1);
  return [D === 0 ? 0 : n / D, D];
}

export function launchNorm(L: Launcher, args: LayerNormArgs, centred: boolean): void {
  const { x, weight, bias, eps, out, mean, rstd } = args;
  const kernel = centred ? 'layerNorm' : 'rmsNorm';
  assertDense(kernel, x, weight, bias);
  sameDtype(kernel, x, weight, bias, out);
  assertStatsDtype(kernel, x, { mean, rstd });
  const [rows, D] = normRows(x);
  if (rows === 0) return;
  L.launch(normKernel(x.dtype, centred), [Math.min(rows, L.multiprocessors * 16)], ROW_THREADS, [
    ['ptr', ptrOf(out)],
    ['ptr', ptrOf(mean)],
    ['ptr', ptrOf(rstd)],
    ['ptr', ptrOf(x)],
    ['ptr', ptrOrNull(weight)],
    ['ptr', ptrOrNull(bias)],
    ['i64', rows],
    ['i64', D],
    ['f64', eps],
  ]);
}

export function launchNormBackward(L: Launcher, args: LayerNormBackwardArgs, centred: boolean): void {
  const { x, weight, mean, rstd, dy, dx, dweight, dbias } = args;
  const kernel = centred ? 'layerNormBackward' : 'rmsNormBackward';
  assertDense(kernel, x, weight, dy);
  sameDtype(kernel, x, weight, dy, dx, dweight, dbias);
  assertStatsDtype(kernel, x, { mean, rstd });
  const [rows, D] = normRows(x);
  if (rows === 0 || D === 0) {
    for (const g of [dweight, dbias]) if (g) L.zero(ptrOf(g), D * bytesPerElement(x.dtype));
    return;
  }
  L.launch(normBackwardKernel(x.dtype, centred), [Math.min(rows, L.multiprocessors * 16)], ROW_THREADS, [
    ['ptr', ptrOf(dx)],
    ['ptr', ptrOf(x)],
    ['ptr', ptrOrNull(weight)],
    ['ptr', ptrOf(mean)],
    ['ptr', ptrOf(rstd)],
    ['ptr', ptrOf(dy)],
    ['i64', rows],
    ['i64', D],
  ]);
  if (!dweight && !dbias) return;
  // The column sums meet with atomicAdd in the compute type, from zero: in the outputs themselves, or for
  // the half types in float scratch that is rounded into them at the end.
  const accBytes = D * bytesPerElement(computeType(x.dtype));
  const scratch = isHalf(x.dtype) ? L.scratch(2 * accBytes) : null;
  try {
    const dw = dweight ? (scratch ? scratch.ptr : ptrOf(dweight)) : 0n;
    const db = dbias ? (scratch ? scratch.ptr + BigInt(accBytes) : ptrOf(dbias)) : 0n;
    for (const p of [dw, db]) if (p) L.zero(p, accBytes);
    const grid = [Math.ceil(D / NORM_COLUMN_THREADS), Math.ceil(rows / NORM_ROWS_PER_BLOCK)];
    L.launch(normParamGradKernel(x.dtype), grid, NORM_COLUMN_THREADS, [
      ['ptr', dw],
      ['ptr', db],
      ['ptr', ptrOf(x)],
      ['ptr', ptrOf(mean)],
      ['ptr', ptrOf(rstd)],
      ['ptr', ptrOf(dy)],
      ['i64', rows],
      ['i64', D],
    ]);
    if (!scratch) return;
    for (const [out, acc] of [
      [dweight, dw],
      [dbias, db],
    ] as const)
      if (out)
        L.launch(normParamRoundKernel(x.dtype), [Math.ceil(D / NORM_COLUMN_THREADS)], NORM_COLUMN_THREADS, [
          ['ptr', ptrOf(out)],
          ['ptr', acc],
          ['i64', D],
        ]);
  } finally {
    if (scratch) L.release(scratch);
  }
}
