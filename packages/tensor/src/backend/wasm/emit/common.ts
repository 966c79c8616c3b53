/**
 * Building blocks every kernel emitter shares: counted loops, horizontal reductions, and exp. Pointers and
 * loop counters are byte offsets (i32), so a vector step is 16 and a scalar step 4.
 */
import { type Code, V128 } from '../builder.js';

/**
 * `while (i + step <= n) { body; i += step }`, with `i` and `n` locals (the caller initialises `i`, so a
 * scalar tail can continue where a vector loop stopped). The body must not branch out of the loop.
 */
export function loopWhile(c: Code, i: number, n: number, step: number, body: () => void): void {
  c.block().loop();
  c.localGet(n).localGet(i).i32Const(step).i32Add().i32LtS().brIf(1);
  body();
  c.localGet(i).i32Const(step).i32Add().localSet(i).br(0);
  c.end().end();
}

/**
 * Over the bytes [0, nb) of a row: `vec` for each 16-byte step while a whole vector fits, then `scalar` for
 * each remaining 4-byte element; both read the byte offset from local `p`.
 */
export function rowLoop(c: Code, p: number, nb: number, vec: () => void, scalar: () => void): void {
  c.i32Const(0).localSet(p);
  loopWhile(c, p, nb, 16, vec);
  loopWhile(c, p, nb, 4, scalar);
}

/** Horizontal reduction of the v128 in `v` with a scalar f32 binary op, left on the stack. */
export function horizontal(c: Code, v: number, op: (c: Code) => void): void {
  c.localGet(v).f32x4ExtractLane(0).localGet(v).f32x4ExtractLane(1);
  op(c);
  c.localGet(v).f32x4ExtractLane(2).localGet(v).f32x4ExtractLane(3);
  op(c);
  op(c);
}

/** Sum of the four lanes of `v`, in f64 (so a row's lane partial sums lose nothing more when combined). */
export function horizontalSumF64(c: Code, v: number): void {
  for (let lane = 0; lane < 4; lane++) {
    c.localGet(v).f32x4ExtractLane(lane).f64PromoteF32();
    if (lane > 0) c.f64Add();
  }
}

const LOG2E = Math.LOG2E;
const EXP_C1 = 0.693359375;
const EXP_C2 = -2.1219444e-4;
/** Below this exp would be subnormal: the kernels return 0 (an absolute error under 1.2e-38). */
export const EXP_LO = -87.33654;
const EXP_HI = 88.72283905206835;
const EXP_POLY = [
  1.98756915e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
];

export interface ExpTemps {
  n: number;
  r: number;
}

export function expTemps(c: Code): ExpTemps {
  return { n: c.local(V128), r: c.local(V128) };
}

/**
 * exp of the v128 in local `x`, left on the stack. x = n·ln2 + r with |r| ≤ ln2/2; exp(r) by the Cephes
 * polynomial (≈1 ulp); 2^n built in the exponent bits as 2^(n>>1)·2^(n-(n>>1)), so n up to 128 does not
 * overflow the exponent field. Lanes below EXP_LO (and -Infinity) give 0. With `general`, lanes above
 * ln(FLT_MAX) give +Infinity and NaN lanes stay NaN; without it (inputs known ≤ 0, as after subtracting a
 * row max) NaN lanes give 0 and the row's NaN max carries the NaN instead.
 */
export function emitExp(c: Code, x: number, t: ExpTemps, general = false): void {
  c.localGet(x).f32x4SplatConst(EXP_LO).f32x4Max();
  if (general) c.f32x4SplatConst(EXP_HI).f32x4Min();
  c.localSet(t.r);
  c.localGet(t.r).f32x4SplatConst(LOG2E).f32x4Mul().f32x4Nearest().localSet(t.n);
  // r = x - n·C1 - n·C2 (C1 + C2 = ln 2; C1 has few bits, so n·C1 is exact).
  c.localGet(t.r).localGet(t.n).f32x4SplatConst(EXP_C1).f32x4Mul().f32x4Sub();
  c.localGet(t.n).f32x4SplatConst(EXP_C2).f32x4Mul().f32x4Sub().localSet(t.r);
  c.f32x4SplatConst(EXP_POLY[0]);
  for (let i = 1; i < EXP_POLY.length; i++)
    c.localGet(t.r).f32x4Mul().f32x4SplatConst(EXP_POLY[i]).f32x4Add();
  // p·r² + r + 1
  c.localGet(t.r).f32x4Mul().localGet(t.r).f32x4Mul().localGet(t.r).f32x4Add().f32x4SplatConst(1).f32x4Add();
  // · 2^(n>>1) · 2^(n - (n>>1)), each as (e + 127) << 23 in the f32 bits.
  c.localGet(t.n).i32x4TruncSatF32x4S().localSet(t.n);
  c.localGet(t.n).i32Const(1).i32x4ShrS().i32Const(127).i32x4Splat().i32x4Add().i32Const(23).i32x4Shl();
  c.f32x4Mul();
  c.localGet(t.n).localGet(t.n).i32Const(1).i32x4ShrS().i32x4Sub();
  c.i32Const(127).i32x4Splat().i32x4Add().i32Const(23).i32x4Shl();
  c.f32x4Mul();
  // Zero where x < EXP_LO, -Infinity and NaN included (x ≥ LO is false for NaN).
  c.localGet(x).f32x4SplatConst(EXP_LO).f32x4Ge().v128And();
  if (!general) return;
  c.localSet(t.r);
  c.f32x4SplatConst(Number.POSITIVE_INFINITY).localGet(t.r).localGet(x).f32x4SplatConst(EXP_HI).f32x4Gt();
  c.v128Bitselect().localSet(t.r);
  c.localGet(x).localGet(t.r).localGet(x).localGet(x).f32x4Ne().v128Bitselect();
}
