/**
 * layer_norm and rms_norm over the last axis, forward and backward. Forward: one workgroup per row, mean then
 * variance in two passes over the (cached) row, as the CPU reference does. Backward: the row kernel writes dx
 * from the two row sums (Σ gy, Σ gy·x̂); a column kernel sums dweight/dbias over rows, so no atomics are needed.
 * Optional weight and bias select pipeline variants: a WebGPU binding cannot be left empty.
 */
import { NORM_GRAD, NORM_RSTD, NORM_XHAT } from '../../../kernel-ir/rows.js';
import type { LayerNormArgs, LayerNormBackwardArgs, View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { type Binding, Params, grid, type GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer } from '../wgsl.js';
import { rowFunctions, rowThreads, rowsOf, subgroupHooks, sumReducer } from './rows.js';

interface Slot {
  name: string;
  view: View | null;
  write?: boolean;
}

/** Declares and binds the present views in order; absent ones (null) get no binding. */
function slots(list: Slot[]): { decls: string; bindings: Binding[]; has: Set<string> } {
  const bindings: Binding[] = [];
  const lines: string[] = [];
  const has = new Set<string>();
  for (const s of list) {
    if (!s.view) continue;
    if (s.view.dtype !== 'float32')
      throw new Error(
        `webgpu norm: ${s.name} must be float32, got ${s.view.dtype} of shape [${s.view.shape}]`,
      );
    bindings.push({ storage: s.view.storage as GpuStorage, write: s.write });
    lines.push(buffer(bindings.length, s.name, 'float32', s.write));
    has.add(s.name);
  }
  return { decls: lines.join('\n'), bindings, has };
}

const ROWS_PER_PASS = 16384;

function forward(queue: GpuQueue, args: LayerNormArgs, centred: boolean): void {
  const { x, weight, bias, eps, out, mean, rstd } = args;
  const [rows, width] = rowsOf(x.shape);
  if (rows === 0) return;
  const wg = rowThreads(width);
  const s = slots([
    { name: 'x', view: x },
    { name: 'w', view: weight },
    { name: 'b', view: bias },
    { name: 'y', view: out, write: true },
    { name: 'mu', view: mean, write: true },
    { name: 'rs', view: rstd, write: true },
  ]);
  const name = centred ? 'layerNorm' : 'rmsNorm';
  const scale = s.has.has('w') ? ' * w[pu(4u) + j]' : '';
  const shift = s.has.has('b') ? ' + b[pu(5u) + j]' : '';
  const sg = subgroupHooks(queue.subgroups);
  const pipeline = queue.pipeline(
    `${name}|${[...s.has].join(',')}|${wg}${sg.key}`,
    () => `${sg.enable}
${PARAMS}
${s.decls}
${sumReducer(wg, 'red_mean', 'f32', sg.on)}
${sumReducer(wg, 'red_var', 'f32', sg.on)}
${rowFunctions(NORM_RSTD, NORM_XHAT)}
@compute @workgroup_size(${wg})
fn main(${GROUP_BUILTINS}${sg.builtins}) {
  ${sg.init}
  ${LINEAR_GROUP}
  let row = group;
  if (row >= pu(0u)) { return; }
  let W = pu(1u);
  let xb = pu(3u) + row * W;
  var m = 0.0;
  ${
    centred
      ? `var acc = 0.0;
  for (var j = lid.x; j < W; j += ${wg}u) { acc += x[xb + j]; }
  m = red_mean(acc, lid.x) / f32(W);`
      : ''
  }
  var sq = 0.0;
  for (var j = lid.x; j < W; j += ${wg}u) { let d = x[xb + j] - m; sq += d * d; }
  let inv = ${NORM_RSTD.name}(red_var(sq, lid.x), f32(W), pf(2u));
  if (lid.x == 0u) { mu[row] = m; rs[row] = inv; }
  for (var j = lid.x; j < W; j += ${wg}u) { y[row * W + j] = ${NORM_XHAT.name}(x[xb + j], m, inv)${scale}${shift}; }
}`,
  );
  const params = new Params()
    .u32(rows, width)
    .f32s(eps)
    .u32(x.offset, weight?.offset ?? 0, bias?.offset ?? 0);
  queue.dispatch(`${name} [${x.shape}]`, pipeline, s.bindings, params, grid(rows));
}

function backward(queue: GpuQueue, args: LayerNormBackwardArgs, centred: boolean): void {
  const { x, weight, mean, rstd, dy, dx, dweight, dbias } = args;
  const [rows, width] = rowsOf(x.shape);
  const name = centred ? 'layerNormBackward' : 'rmsNormBackward';
  // Words: rows, W, x, w, mean, rstd, dy offsets.
  const params = new Params().u32(
    rows,
    width,
    x.offset,
    weight?.offset ?? 0,
    mean.offset,
    rstd.offset,
    dy.offset,
  );
  if (rows > 0) {
    const wg = rowThreads(width);
    const s = slots([
      { name: 'x', view: x },
      { name: 'w', view: weight },
      { name: 'mu', view: mean },
      { name: 'rs', view: rstd },
      { name: 'g', view: dy },
      { name: 'dx', view: dx, write: true },
    ]);
    const gy = s.has.has('w') ? 'g[gb + j] * w[pu(3u) + j]' : 'g[gb + j]';
    const sg = subgroupHooks(queue.subgroups);
    const pipeline = queue.pipeline(
      `${name}|dx|${[...s.has].join(',')}|${wg}${sg.key}`,
      () => `${sg.enable}
${PARAMS}
${s.decls}
${sumReducer(wg, 'sum_a', 'f32', sg.on)}
${sumReducer(wg, 'sum_b', 'f32', sg.on)}
${rowFunctions(NORM_XHAT, NORM_GRAD)}
@compute @workgroup_size(${wg})
fn main(${GROUP_BUILTINS}${sg.builtins}) {
  ${sg.init}
  ${LINEAR_GROUP}
  let row = group;
  if (row >= pu(0u)) { return; }
  let W = pu(1u);
  let xb = pu(2u) + row * W;
  let gb = pu(6u) + row * W;
  let m = mu[pu(4u) + row];
  let inv = rs[pu(5u) + row];
  var a = 0.0;
  var b = 0.0;
  for (var j = lid.x; j < W; j += ${wg}u) {
    let xhat = ${NORM_XHAT.name}(x[xb + j], m, inv);
    let gy = ${gy};
    a += gy;
    b += gy * xhat;
  }
  let meanG = ${centred ? 'sum_a(a, lid.x) / f32(W)' : '0.0'};
  let meanGX = sum_b(b, lid.x) / f32(W);
  for (var j = lid.x; j < W; j += ${wg}u) {
    let xhat = ${NORM_XHAT.name}(x[xb + j], m, inv);
    let gy = ${gy};
    dx[row * W + j] = ${NORM_GRAD.name}(gy, xhat, inv, meanG, meanGX);
  }
}`,
    );
    queue.dispatch(`${name} dx [${x.shape}]`, pipeline, s.bindings, params, grid(rows));
  }
  if (!dweight && !dbias) return;
  // x, mean and rstd are bound only when dweight needs them (auto layouts drop unused bindings).
  const c = slots([
    { name: 'x', view: dweight ? x : null },
    { name: 'mu', view: dweight ? mean : null },
    { name: 'rs', view: dweight ? rstd : null },
    { name: 'g', view: dy },
    { name: 'dw', view: dweight, write: true },
    { name: 'db', view: dbias, write: true },
  ]);
  const WG = 64;
  const pipeline = queue.pipeline(
    `${name}|params|${[...c.has].join(',')}`,
    () => `${PARAMS}
${c.decls}
${c.has.has('dw') ? rowFunctions(NORM_XHAT) : ''}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let j = group * ${WG}u + lid.x;
  let W = pu(1u);
  if (j >= W) { return; }
  var sw = 0.0;
  var sb = 0.0;
  for (var r = pu(7u); r < pu(8u); r++) {
    let g0 = g[pu(6u) + r * W + j];
    ${c.has.has('dw') ? `sw += g0 * ${NORM_XHAT.name}(x[pu(2u) + r * W + j], mu[pu(4u) + r], rs[pu(5u) + r]);` : ''}
    sb += g0;
  }
  let add = pu(9u) == 1u;
  ${c.has.has('dw') ? 'dw[j] = select(sw, dw[j] + sw, add);' : ''}
  ${c.has.has('db') ? 'db[j] = select(sb, db[j] + sb, add);' : ''}
}`,
  );
  if (width === 0) return;
  // Passes of at most ROWS_PER_PASS rows: Mesa's llvmpipe cuts loops beyond 65535 iterations short.
  for (let r0 = 0; r0 < rows || r0 === 0; r0 += ROWS_PER_PASS) {
    const pass = new Params()
      .u32(rows, width, x.offset, weight?.offset ?? 0, mean.offset, rstd.offset, dy.offset)
      .u32(r0, Math.min(rows, r0 + ROWS_PER_PASS), r0 > 0 ? 1 : 0);
    queue.dispatch(`${name} dweight [${x.shape}]`, pipeline, c.bindings, pass, grid(Math.ceil(width / WG)));
  }
}

export const layerNorm = (q: GpuQueue, args: LayerNormArgs) => forward(q, args, true);
export const rmsNorm = (q: GpuQueue, args: LayerNormArgs) => forward(q, args, false);
export const layerNormBackward = (q: GpuQueue, args: LayerNormBackwardArgs) => backward(q, args, true);
export const rmsNormBackward = (q: GpuQueue, args: LayerNormBackwardArgs) => backward(q, args, false);
