/**
 * WGSL for the row kernels (softmax, logprobs, norms): one workgroup per row, threads striding along it,
 * partial results combined by a tree in workgroup memory. The online-softmax pair (running max m, sum s of
 * exp(x - m)) merges two partials by rescaling the smaller max's sum, so the row is read once for both.
 */
import { INF, sizeOfShape } from '../wgsl.js';

/** 64 threads for short rows (most of 256 would idle), 256 for long ones. */
export function rowThreads(width: number): number {
  return width <= 1024 ? 64 : 256;
}

export function rowsOf(shape: readonly number[]): [rows: number, width: number] {
  const width = shape.length === 0 ? 1 : shape[shape.length - 1];
  return [width === 0 ? 0 : sizeOfShape(shape) / width, width];
}

/**
 * Declares `red_sum(v, lid)`: the workgroup-wide sum of one f32 per thread, seen by every thread. Give each
 * reduction in a kernel its own name (hence its own buffer): two back-to-back reductions through one buffer
 * returned wrong sums to some threads on Mesa's llvmpipe, though the barriers order them.
 */
export function sumReducer(wg: number, name = 'red_sum', type = 'f32'): string {
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
export function onlineReducer(wg: number): string {
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
fn red_lse(v: vec2<f32>, l: u32) -> vec2<f32> {
  lse_buf[l] = v;
  workgroupBarrier();
  for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {
    if (l < s) { lse_buf[l] = online_merge(lse_buf[l], lse_buf[l + s]); }
    workgroupBarrier();
  }
  let r = lse_buf[0];
  workgroupBarrier();
  return r;
}

fn lse_of(p: vec2<f32>) -> f32 { if (p.x == neg_inf()) { return neg_inf(); } return p.x + log(p.y); }`;
}
