/**
 * WGSL for the row kernels (softmax, logprobs, norms): one workgroup per row, threads striding along it,
 * partial results combined by a tree in workgroup memory — or, where the device has the `subgroups`
 * feature, within each subgroup first (subgroupAdd / subgroupMax), then across the few subgroup partials.
 * The online-softmax pair (running max m, sum s of exp(x - m)) merges two partials by rescaling the smaller
 * max's sum, so the row is read once for both.
 */
import type { ScalarFunction } from '../../../kernel-ir/expr.js';
import { LOG_SUM_EXP } from '../../../kernel-ir/rows.js';
import { wgslFunction } from '../../../kernel-ir/render-wgsl.js';
import { INF } from '../../../kernel-ir/render-wgsl.js';
import { sizeOfShape } from '../wgsl.js';

/** The row arithmetic of the kernel IR (kernel-ir/rows.ts) as f32 WGSL functions, each under its IR name. */
export function rowFunctions(...functions: ScalarFunction[]): string {
  return functions.map((f) => wgslFunction(f, 'f32', f.name)).join('\n');
}

/** 64 threads for short rows (most of 256 would idle), 256 for long ones. */
export function rowThreads(width: number): number {
  return width <= 1024 ? 64 : 256;
}

export function rowsOf(shape: readonly number[]): [rows: number, width: number] {
  const width = shape.length === 0 ? 1 : shape[shape.length - 1];
  return [width === 0 ? 0 : sizeOfShape(shape) / width, width];
}

/**
 * What a row kernel adds when its reductions use subgroups: `enable` before everything, the builtins after
 * the kernel's parameters, `init` as its first statement; `key` tells the pipelines apart.
 *
 * The subgroup reducers assume a subgroup is a run of consecutive local invocation indices (lane = index −
 * first index), as GPU drivers form them for one-dimensional workgroups; the WebGPU spec leaves the mapping
 * to the implementation, and the browser test checks these kernels against the CPU on SwiftShader.
 */
export interface SubgroupHooks {
  /** Whether subgroups are used: pass it on to the reducers, so the hooks and the reducers always agree. */
  on: boolean;
  enable: string;
  builtins: string;
  init: string;
  key: string;
}

export function subgroupHooks(on: boolean): SubgroupHooks {
  if (!on) return { on, enable: '', builtins: '', init: '', key: '' };
  return {
    on,
    enable: 'enable subgroups;\nvar<private> sg_id: u32;\nvar<private> sg_size: u32;',
    builtins: ', @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_size) sg_width: u32',
    init: 'sg_id = sg_lane; sg_size = sg_width;',
    key: '|subgroups',
  };
}

/** The loop over the subgroup partials in slots 0 .. wg / subgroup size (rounded up), merged by `merge`. */
function subgroupCombine(wg: number, buf: string, merge: (acc: string, v: string) => string): string {
  return `var r = ${buf}[0];
  for (var i = 1u; i < (${wg}u + sg_size - 1u) / sg_size; i++) { r = ${merge('r', `${buf}[i]`)}; }`;
}

/**
 * Declares `red_sum(v, lid)`: the workgroup-wide sum of one f32 per thread, seen by every thread. Give each
 * reduction in a kernel its own name (hence its own buffer): two back-to-back reductions through one buffer
 * returned wrong sums to some threads on Mesa's llvmpipe, though the barriers order them.
 */
export function sumReducer(wg: number, name = 'red_sum', type = 'f32', subgroups = false): string {
  if (subgroups)
    return `var<workgroup> ${name}_buf: array<${type}, ${wg}>;
fn ${name}(v: ${type}, l: u32) -> ${type} {
  let s = subgroupAdd(v);
  if (sg_id == 0u) { ${name}_buf[(l - sg_id) / sg_size] = s; }
  workgroupBarrier();
  ${subgroupCombine(wg, `${name}_buf`, (a, v) => `${a} + ${v}`)}
  workgroupBarrier();
  return r;
}`;
  return `var<workgroup> ${name}_buf: array<${type}, ${wg}>;
fn ${name}(v: ${type}, l: u32) -> ${type} {
  ${name}_buf[l] = v;
  workgroupBarrier();
  for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {
    if (l < s) { ${name}_buf[l] = ${name}_buf[l] + ${name}_buf[l + s]; }
    workgroupBarrier();
  }
  let r = ${name}_buf[0];
  workgroupBarrier();
  return r;
}`;
}

/** Declares `online_merge` and `red_lse(ms, lid)`: merges per-thread (max, sumexp) pairs; returns the row's pair. */
export function onlineReducer(wg: number, subgroups = false): string {
  const reduce = subgroups
    ? `fn red_lse(v: vec2<f32>, l: u32) -> vec2<f32> {
  let m = subgroupMax(v.x);
  let s = subgroupAdd(select(v.y * exp(v.x - m), 0.0, v.x == neg_inf()));
  if (sg_id == 0u) { lse_buf[(l - sg_id) / sg_size] = vec2<f32>(m, s); }
  workgroupBarrier();
  ${subgroupCombine(wg, 'lse_buf', (a, v) => `online_merge(${a}, ${v})`)}
  workgroupBarrier();
  return r;
}`
    : `fn red_lse(v: vec2<f32>, l: u32) -> vec2<f32> {
  lse_buf[l] = v;
  workgroupBarrier();
  for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {
    if (l < s) { lse_buf[l] = online_merge(lse_buf[l], lse_buf[l + s]); }
    workgroupBarrier();
  }
  let r = lse_buf[0];
  workgroupBarrier();
  return r;
}`;
  return `${INF}
fn online_merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let m = max(a.x, b.x);
  if (m == neg_inf()) { return vec2<f32>(m, 0.0); }
  return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}
fn online_add(a: vec2<f32>, x: f32) -> vec2<f32> {
  if (x == neg_inf()) { return a; }
  if (x <= a.x) { return vec2<f32>(a.x, a.y + exp(x - a.x)); }
  return vec2<f32>(x, a.y * exp(a.x - x) + 1.0);
}
var<workgroup> lse_buf: array<vec2<f32>, ${wg}>;
${reduce}

${rowFunctions(LOG_SUM_EXP)}
fn lse_of(p: vec2<f32>) -> f32 { return ${LOG_SUM_EXP.name}(p.x, p.y); }`;
}
