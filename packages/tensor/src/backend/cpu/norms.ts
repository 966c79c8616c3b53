import { jsFunction } from '../../kernel-ir/render-js.js';
import { NORM_GRAD, NORM_RSTD, NORM_XHAT } from '../../kernel-ir/rows.js';
import type { LayerNormArgs, LayerNormBackwardArgs, View } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

// The row arithmetic, from the kernel IR (kernel-ir/rows.ts).
const rstdOf = jsFunction(NORM_RSTD);
const xhatOf = jsFunction(NORM_XHAT);
const gradOf = jsFunction(NORM_GRAD);

function rows(x: View): [number, number] {
  const d = x.shape[x.shape.length - 1];
  const n = x.shape.reduce((a, b) => a * b, 1);
  return [d === 0 ? 0 : n / d, d];
}

/** Shared by layer_norm (centred) and rms_norm (not centred): y = (x - mean) * rstd * w + b. */
function normForward(args: LayerNormArgs, centred: boolean): void {
  const { x, weight, bias, eps, out, mean, rstd } = args;
  assertDense(centred ? 'layerNorm' : 'rmsNorm', x, weight, bias);
  const xs = dataOf(x);
  const w = weight && dataOf(weight);
  const b = bias && dataOf(bias);
  const y = dataOf(out);
  const mu = dataOf(mean);
  const rs = dataOf(rstd);
  const [n, d] = rows(x);
  for (let r = 0; r < n; r++) {
    const s = x.offset + r * d;
    let m = 0;
    if (centred) {
      for (let j = 0; j < d; j++) m += xs[s + j];
      m /= d;
    }
    let v = 0;
    for (let j = 0; j < d; j++) v += (xs[s + j] - m) ** 2;
    const inv = rstdOf(v, d, eps);
    mu[r] = m;
    rs[r] = inv;
    for (let j = 0; j < d; j++) {
      let z = xhatOf(xs[s + j], m, inv);
      if (w) z *= w[weight!.offset + j];
      if (b) z += b[bias!.offset + j];
      y[r * d + j] = z;
    }
  }
}

/**
 * With xhat = (x - mean) * rstd and gy = dy * w:
 * dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)); rms_norm drops the mean(gy) term.
 */
function normBackward(args: LayerNormBackwardArgs, centred: boolean): void {
  const { x, weight, mean, rstd, dy, dx, dweight, dbias } = args;
  assertDense(centred ? 'layerNormBackward' : 'rmsNormBackward', x, weight, dy);
  const xs = dataOf(x);
  const w = weight && dataOf(weight);
  const mu = dataOf(mean);
  const rs = dataOf(rstd);
  const g = dataOf(dy);
  const o = dataOf(dx);
  const dw = dweight && dataOf(dweight);
  const db = dbias && dataOf(dbias);
  const [n, d] = rows(x);
  dw?.fill(0);
  db?.fill(0);
  for (let r = 0; r < n; r++) {
    const s = x.offset + r * d;
    const gs = dy.offset + r * d;
    const m = mu[mean.offset + r];
    const inv = rs[rstd.offset + r];
    let sumG = 0;
    let sumGX = 0;
    for (let j = 0; j < d; j++) {
      const xhat = xhatOf(xs[s + j], m, inv);
      const gy = g[gs + j] * (w ? w[weight!.offset + j] : 1);
      sumG += gy;
      sumGX += gy * xhat;
      if (dw) dw[j] += g[gs + j] * xhat;
      if (db) db[j] += g[gs + j];
    }
    const meanG = centred ? sumG / d : 0;
    const meanGX = sumGX / d;
    for (let j = 0; j < d; j++) {
      const xhat = xhatOf(xs[s + j], m, inv);
      const gy = g[gs + j] * (w ? w[weight!.offset + j] : 1);
      o[r * d + j] = gradOf(gy, xhat, inv, meanG, meanGX);
    }
  }
}

export const layerNorm = (args: LayerNormArgs) => normForward(args, true);
export const layerNormBackward = (args: LayerNormBackwardArgs) => normBackward(args, true);
export const rmsNorm = (args: LayerNormArgs) => normForward(args, false);
export const rmsNormBackward = (args: LayerNormBackwardArgs) => normBackward(args, false);
