/**
 * Fused softmax / log-softmax, their backward, and logprobs (log_softmax gathered at the targets) with its
 * backward, on contiguous rows. Forward kernels read each row once for the max and the sum together (the
 * online-softmax pair) and once more to write; logprobs writes only one value and the log-sum-exp per row,
 * never the log-softmax itself. CPU rasterisers run a row per invocation instead (see softmaxSerial).
 */
import { LOGPROBS_GRAD, LOG_SOFTMAX, LOG_SUM_EXP, softmaxFunctions } from '../../../kernel-ir/rows.js';
import type { View } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { INF } from '../../../kernel-ir/render-wgsl.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer, sizeOfShape } from '../wgsl.js';
import { onlineReducer, rowFunctions, rowThreads, rowsOf, subgroupHooks, sumReducer } from './rows.js';

function checkFloat(kernel: string, ...views: View[]): void {
  for (const v of views)
    if (v.dtype !== 'float32')
      throw new Error(`webgpu ${kernel}: expected float32, got ${v.dtype} of shape [${v.shape}]`);
}

const ROW_START = `${LINEAR_GROUP}
  let row = group;
  if (row >= pu(0u)) { return; }
  let W = pu(1u);`;

/**
 * On CPU rasterisers a row per invocation is faster: the SIMD lanes of a llvmpipe thread are invocations,
 * so 64 rows run side by side with no barriers (max, then exp-and-sum, then write). Rows longer than
 * SERIAL_MAX go to the workgroup kernels (llvmpipe cuts loops past 65535).
 */
const SERIAL_MAX = 32768;
const SERIAL_WG = 64;

function serialRows(queue: GpuQueue, width: number): boolean {
  return queue.software && width <= SERIAL_MAX;
}

/**
 * Rows that start 4-aligned with a width a multiple of 4 are read and written as vec4: on llvmpipe each
 * storage access is a loop over the SIMD lanes, so one vec4 access costs little more than one float.
 */
function vec4Rows(width: number, ...views: View[]): boolean {
  return width % 4 === 0 && views.every((v) => v.offset % 4 === 0);
}

function softmaxSerial(queue: GpuQueue, x: View, out: View, log: boolean, rows: number, width: number): void {
  const vec = vec4Rows(width, x, out);
  // The row in units of E (f32, or vec4 of four f32); hmax / hsum fold an E into one f32.
  const E = vec ? 'vec4<f32>' : 'f32';
  const hmax = (v: string) => (vec ? `max(max(${v}.x, ${v}.y), max(${v}.z, ${v}.w))` : v);
  const hsum = (v: string) => (vec ? `dot(${v}, vec4<f32>(1.0))` : v);
  const u = vec ? 4 : 1;
  const { at } = softmaxFunctions(log);
  // The IR's functions are scalar: a vec4 row writes lane by lane.
  const write = vec
    ? `vec4<f32>(${['x', 'y', 'z', 'w'].map((c) => `${at.name}(v.${c}, lse)`).join(', ')})`
    : `${at.name}(v, lse)`;
  const pipeline = queue.pipeline(
    `softmax serial|${log}|${vec}`,
    () => `${PARAMS}
@group(0) @binding(1) var<storage, read> x: array<${E}>;
@group(0) @binding(2) var<storage, read_write> out: array<${E}>;
${INF}
${rowFunctions(LOG_SUM_EXP, at)}
@compute @workgroup_size(${SERIAL_WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let row = group * ${SERIAL_WG}u + lid.x;
  if (row >= pu(0u)) { return; }
  let W = pu(1u) / ${u}u;
  let xb = pu(2u) / ${u}u + row * W;
  let ob = row * W;
  var mv = ${E}(neg_inf());
  for (var j = 0u; j < W; j++) { mv = max(mv, x[xb + j]); }
  let m = ${hmax('mv')};
  var sv = ${E}(0.0);
  // Every logit −∞: the sum stays 0 and the log-sum-exp is −∞, so the outputs are NaN as on the CPU.
  if (m != neg_inf()) { for (var j = 0u; j < W; j++) { sv += exp(x[xb + j] - m); } }
  let lse = ${LOG_SUM_EXP.name}(m, ${hsum('sv')});
  for (var j = 0u; j < W; j++) { let v = x[xb + j]; out[ob + j] = ${write}; }
}`,
  );
  queue.dispatch(
    `${log ? 'logSoftmax' : 'softmax'} [${x.shape}]`,
    pipeline,
    [{ storage: x.storage as GpuStorage }, { storage: out.storage as GpuStorage, write: true }],
    new Params().u32(rows, width, x.offset),
    grid(Math.ceil(rows / SERIAL_WG)),
  );
}

export function softmax(queue: GpuQueue, x: View, out: View, log: boolean): void {
  checkFloat('softmax', x);
  const [rows, width] = rowsOf(x.shape);
  if (rows === 0) return;
  if (serialRows(queue, width)) {
    softmaxSerial(queue, x, out, log, rows, width);
    return;
  }
  const wg = rowThreads(width);
  const sg = subgroupHooks(queue.subgroups);
  const { at } = softmaxFunctions(log);
  const pipeline = queue.pipeline(
    `softmax|${log}|${wg}${sg.key}`,
    () => `${sg.enable}
${PARAMS}
${buffer(1, 'x', 'float32')}
${buffer(2, 'out', 'float32', true)}
${onlineReducer(wg, sg.on)}
${rowFunctions(at)}
@compute @workgroup_size(${wg})
fn main(${GROUP_BUILTINS}${sg.builtins}) {
  ${sg.init}
  ${ROW_START}
  let xb = pu(2u) + row * W;
  let ob = row * W;
  var p = vec2<f32>(neg_inf(), 0.0);
  for (var j = lid.x; j < W; j += ${wg}u) { p = online_add(p, x[xb + j]); }
  let lse = lse_of(red_lse(p, lid.x));
  for (var j = lid.x; j < W; j += ${wg}u) { out[ob + j] = ${at.name}(x[xb + j], lse); }
}`,
  );
  const params = new Params().u32(rows, width, x.offset);
  queue.dispatch(
    `${log ? 'logSoftmax' : 'softmax'} [${x.shape}]`,
    pipeline,
    [{ storage: x.storage as GpuStorage }, { storage: out.storage as GpuStorage, write: true }],
    params,
    grid(rows),
  );
}

export function softmaxBackward(queue: GpuQueue, y: View, dy: View, dx: View, log: boolean): void {
  checkFloat('softmaxBackward', y, dy);
  const [rows, width] = rowsOf(y.shape);
  if (rows === 0) return;
  const wg = rowThreads(width);
  const { dot: term, grad } = softmaxFunctions(log);
  const sg = subgroupHooks(queue.subgroups);
  const pipeline = queue.pipeline(
    `softmaxBackward|${log}|${wg}${sg.key}`,
    () => `${sg.enable}
${PARAMS}
${buffer(1, 'y', 'float32')}
${buffer(2, 'g', 'float32')}
${buffer(3, 'dx', 'float32', true)}
${sumReducer(wg, 'red_sum', 'f32', sg.on)}
${rowFunctions(term, grad)}
@compute @workgroup_size(${wg})
fn main(${GROUP_BUILTINS}${sg.builtins}) {
  ${sg.init}
  ${ROW_START}
  let yb = pu(2u) + row * W;
  let gb = pu(3u) + row * W;
  var acc = 0.0;
  for (var j = lid.x; j < W; j += ${wg}u) { acc += ${term.name}(y[yb + j], g[gb + j]); }
  let dot = red_sum(acc, lid.x);
  for (var j = lid.x; j < W; j += ${wg}u) { dx[row * W + j] = ${grad.name}(y[yb + j], g[gb + j], dot); }
}`,
  );
  queue.dispatch(
    `${log ? 'logSoftmax' : 'softmax'}Backward [${y.shape}]`,
    pipeline,
    [
      { storage: y.storage as GpuStorage },
      { storage: dy.storage as GpuStorage },
      { storage: dx.storage as GpuStorage, write: true },
    ],
    new Params().u32(rows, width, y.offset, dy.offset),
    grid(rows),
  );
}

export function logprobs(queue: GpuQueue, logits: View, targets: View, out: View, lse: View): void {
  checkFloat('logprobs', logits);
  const [rows, width] = rowsOf(logits.shape);
  if (rows === 0) return;
  const serial = serialRows(queue, width);
  const wg = serial ? SERIAL_WG : rowThreads(width);
  // Row per invocation (software adapters, see softmaxSerial) or a workgroup per row: the same result.
  const lseOfRow = serial
    ? `${LINEAR_GROUP}
  let row = group * ${SERIAL_WG}u + lid.x;
  if (row >= pu(0u)) { return; }
  let W = pu(1u);
  let xb = pu(2u) + row * W;
  var m = neg_inf();
  for (var j = 0u; j < W; j++) { m = max(m, x[xb + j]); }
  var sum = 0.0;
  for (var j = 0u; j < W; j++) { sum += exp(x[xb + j] - m); }
  let z = ${LOG_SUM_EXP.name}(m, sum);
  let writer = true;`
    : `${ROW_START}
  let xb = pu(2u) + row * W;
  var p = vec2<f32>(neg_inf(), 0.0);
  for (var j = lid.x; j < W; j += ${wg}u) { p = online_add(p, x[xb + j]); }
  let z = lse_of(red_lse(p, lid.x));
  let writer = lid.x == 0u;`;
  // Subgroups serve the workgroup reduction only (a serial row has none).
  const sg = subgroupHooks(queue.subgroups && !serial);
  const pipeline = queue.pipeline(
    `logprobs|${wg}|${serial}${sg.key}`,
    () => `${sg.enable}
${PARAMS}
${buffer(1, 'x', 'float32')}
${buffer(2, 'targets', 'int32')}
${buffer(3, 'out', 'float32', true)}
${buffer(4, 'lse', 'float32', true)}
@group(0) @binding(5) var<storage, read_write> status: array<atomic<i32>, 4>;
${serial ? `${INF}\n${rowFunctions(LOG_SUM_EXP)}` : onlineReducer(wg, sg.on)}
${rowFunctions(LOG_SOFTMAX)}
@compute @workgroup_size(${wg})
fn main(${GROUP_BUILTINS}${sg.builtins}) {
  ${sg.init}
  ${lseOfRow}
  if (writer) {
    let t = targets[pu(3u) + row];
    lse[row] = z;
    if (t < 0 || u32(t) >= W) {
      atomicStore(&status[0], pi(4u)); atomicStore(&status[1], t);
      out[row] = 0.0;
    } else {
      out[row] = ${LOG_SOFTMAX.name}(x[xb + u32(t)], z);
    }
  }
}`,
  );
  const code = queue.validationCode(
    `logprobs: a target is out of range [0, ${width}) (logits [${logits.shape}])`,
  );
  queue.dispatch(
    `logprobs [${logits.shape}]`,
    pipeline,
    [
      { storage: logits.storage as GpuStorage },
      { storage: targets.storage as GpuStorage },
      { storage: out.storage as GpuStorage, write: true },
      { storage: lse.storage as GpuStorage, write: true },
      { storage: queue.status, write: true },
    ],
    new Params().u32(rows, width, logits.offset, targets.offset).i32s(code),
    grid(serial ? Math.ceil(rows / SERIAL_WG) : rows),
  );
}

const WG = 256;

/** dlogits = grad·(onehot(target) − softmax): elementwise given the saved log-sum-exp, no reduction needed. */
export function logprobsBackward(
  queue: GpuQueue,
  logits: View,
  targets: View,
  lse: View,
  grad: View,
  dlogits: View,
): void {
  checkFloat('logprobsBackward', logits, grad);
  const n = sizeOfShape(logits.shape);
  if (n === 0) return;
  const [, width] = rowsOf(logits.shape);
  const pipeline = queue.pipeline(
    'logprobsBackward',
    () => `${PARAMS}
${buffer(1, 'x', 'float32')}
${buffer(2, 'targets', 'int32')}
${buffer(3, 'lse', 'float32')}
${buffer(4, 'g', 'float32')}
${buffer(5, 'dx', 'float32', true)}
${INF}
${rowFunctions(LOGPROBS_GRAD)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let W = pu(1u);
  let row = i / W;
  let j = i % W;
  let gr = g[pu(5u) + row];
  var v = ${LOGPROBS_GRAD.name}(x[pu(2u) + i], lse[pu(4u) + row], gr);
  if (targets[pu(3u) + row] == i32(j)) { v += gr; }
  dx[i] = v;
}`,
  );
  queue.dispatch(
    `logprobsBackward [${logits.shape}]`,
    pipeline,
    [
      { storage: logits.storage as GpuStorage },
      { storage: targets.storage as GpuStorage },
      { storage: lse.storage as GpuStorage },
      { storage: grad.storage as GpuStorage },
      { storage: dlogits.storage as GpuStorage, write: true },
    ],
    new Params().u32(n, width, logits.offset, targets.offset, lse.offset, grad.offset),
    grid(Math.ceil(n / WG)),
  );
}
