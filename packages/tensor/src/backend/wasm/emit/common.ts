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

/**
 * Like `rowLoop`, with a first loop that takes `k` vectors (16·k bytes) per step: `vec(offset, chain)` is
 * emitted for each, so a kernel can keep k independent accumulator chains (hiding the latency of a
 * loop-carried dependency); then single vectors (chain 0), then scalars.
 */
export function rowLoopUnrolled(
  c: Code,
  p: number,
  nb: number,
  k: number,
  vec: (offset: number, chain: number) => void,
  scalar: () => void,
): void {
  c.i32Const(0).localSet(p);
  loopWhile(c, p, nb, 16 * k, () => {
    for (let i = 0; i < k; i++) vec(16 * i, i);
  });
  loopWhile(c, p, nb, 16, () => vec(0, 0));
  loopWhile(c, p, nb, 4, scalar);
}

/** The bytes of f32 lanes for i8x16.shuffle (lanes 0–3 the first operand's, 4–7 the second's). */
export const lanes = (ls: readonly number[]) => ls.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]);

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
/** Below this exp would be (nearly) subnormal: the kernels return 0 (an absolute error under 2.5e-38). */
export const EXP_LO = -86.5;
const EXP_HI = 88.72283905206835;
const EXP_POLY = [
  1.98756915e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
];
/**
 * 2^t ≈ 1 + t·(c1 + t·(c2 + … + t·c5)) for |t| ≤ 1/2, highest coefficient first: relative error ≤ 1.1e-7
 * (least squares on Chebyshev nodes, weighted for relative error).
 */
const EXP2_POLY = [
  1.3218672481624474e-3, 9.671697938399308e-3, 5.5508929524511946e-2, 0.24022238002741117, 0.6931468559416915,
];
/** 1.5·2²³: adding it rounds to an integer held in the low mantissa bits (the "magic number" trick). */
const MAGIC = 12582912;

export interface ExpTemps {
  n: number;
  r: number;
  f: number;
  /** v128 locals holding splatted constants, set once in the prologue (not rematerialised per vector). */
  k: Map<number, number>;
}

const EXP_CONSTANTS = [
  EXP_LO,
  EXP_HI,
  LOG2E,
  MAGIC + 126,
  MAGIC + 127,
  EXP_C1,
  EXP_C2,
  ...EXP_POLY,
  ...EXP2_POLY,
  1,
  2,
];

/** Allocates the temporaries of `emitExp` and sets its constants: call at the start of a function. */
export function expTemps(c: Code): ExpTemps {
  const k = new Map<number, number>();
  for (const v of EXP_CONSTANTS) {
    const local = c.local(V128);
    c.f32x4SplatConst(v).localSet(local);
    k.set(Math.fround(v), local);
  }
  return { n: c.local(V128), r: c.local(V128), f: c.local(V128), k };
}

/** Pushes the splatted constant `v`, from its prologue local when it has one. */
function constant(c: Code, t: ExpTemps, v: number): Code {
  const local = t.k.get(Math.fround(v));
  return local === undefined ? c.f32x4SplatConst(v) : c.localGet(local);
}

/**
 * exp of the v128 in local `x`, left on the stack. x = n·ln2 + r with |r| ≤ ln2/2; exp(r) by the Cephes
 * polynomial (≈1 ulp). n is rounded by adding MAGIC + bias, which leaves bias + n in the low bits of the
 * float, so shifting those bits left by 23 builds 2^(n + bias − 127) without a float-to-int conversion
 * (pmin/pmax and this trick keep V8's code to single SSE instructions). Lanes below EXP_LO (and −Infinity)
 * give 0. With `general`, 2^(n−1)·2 covers n up to 128, lanes above ln(FLT_MAX) give +Infinity and NaN
 * lanes stay NaN; without it (inputs known ≤ 0, as after subtracting a row max) NaN lanes give 0 and the
 * row's NaN max carries the NaN instead.
 */
export function emitExp(c: Code, x: number, t: ExpTemps, general = false): void {
  const bias = general ? 126 : 127;
  const k = (v: number) => constant(c, t, v);
  c.localGet(x);
  k(EXP_LO).f32x4Pmax();
  if (general) k(EXP_HI).f32x4Pmin();
  c.localSet(t.r);
  // n (as MAGIC + bias + n) = round(r·log2e) + MAGIC + bias.
  c.localGet(t.r);
  k(LOG2E).f32x4Mul();
  k(MAGIC + bias)
    .f32x4Add()
    .localSet(t.n);
  // r = x − n·C1 − n·C2 (C1 + C2 = ln 2; C1 has few bits, so n·C1 is exact), n as a float in t.f.
  c.localGet(t.n);
  k(MAGIC + bias)
    .f32x4Sub()
    .localSet(t.f);
  c.localGet(t.r).localGet(t.f);
  k(EXP_C1).f32x4Mul().f32x4Sub().localGet(t.f);
  k(EXP_C2).f32x4Mul().f32x4Sub().localSet(t.r);
  k(EXP_POLY[0]);
  for (let i = 1; i < EXP_POLY.length; i++) {
    c.localGet(t.r).f32x4Mul();
    k(EXP_POLY[i]).f32x4Add();
  }
  // p·r² + r + 1
  c.localGet(t.r).f32x4Mul().localGet(t.r).f32x4Mul().localGet(t.r).f32x4Add();
  k(1).f32x4Add();
  // · 2^(n + bias − 127): the low bits of MAGIC + bias + n shifted into the exponent field.
  c.localGet(t.n).i32Const(23).i32x4Shl().f32x4Mul();
  if (general) k(2).f32x4Mul();
  // Zero where x < EXP_LO, -Infinity and NaN included (x ≥ LO is false for NaN).
  c.localGet(x);
  k(EXP_LO).f32x4Ge().v128And();
  if (!general) return;
  c.localSet(t.r);
  c.f32x4SplatConst(Number.POSITIVE_INFINITY).localGet(t.r).localGet(x);
  k(EXP_HI).f32x4Gt();
  c.v128Bitselect().localSet(t.r);
  c.localGet(x).localGet(t.r).localGet(x).localGet(x).f32x4Ne().v128Bitselect();
}

/**
 * exp of the v128 in local `x` (≤ 0, e.g. x − row max), left on the stack: 2^y with y = x·log2e split as
 * n + t (n = round(y), |t| ≤ 1/2) and a degree-5 polynomial for 2^t. About two thirds the vector operations
 * of `emitExp` (no Cody–Waite split, a shorter polynomial), for a relative error of about 1e-7 + 6e-8·|y|
 * (the rounding of y): under 1e-6 for the terms within 2⁻¹⁶ of the largest, and the rest are too small
 * to change a float32 sum or a softmax output by 1e-9. NaN lanes stay NaN and lanes below EXP_LO (−Infinity
 * included) give 2⁻¹²⁵, which a sum does not see; with `zeroLow` both give 0 (two more operations), as
 * `emitExp` does, since a softmax output must be 0 for a masked −Infinity logit.
 */
export function emitExpFast(c: Code, x: number, t: ExpTemps, zeroLow = false): void {
  const k = (v: number) => constant(c, t, v);
  c.localGet(x);
  k(EXP_LO).f32x4Pmax();
  k(LOG2E).f32x4Mul().localTee(t.r);
  // n (as MAGIC + 127 + n in the low bits), n as a float in t.f, then t = y − n into t.r.
  k(MAGIC + 127)
    .f32x4Add()
    .localTee(t.n);
  k(MAGIC + 127)
    .f32x4Sub()
    .localSet(t.f);
  c.localGet(t.r).localGet(t.f).f32x4Sub().localSet(t.r);
  k(EXP2_POLY[0]);
  for (let i = 1; i < EXP2_POLY.length; i++) {
    c.localGet(t.r).f32x4Mul();
    k(EXP2_POLY[i]).f32x4Add();
  }
  c.localGet(t.r).f32x4Mul();
  k(1).f32x4Add();
  c.localGet(t.n).i32Const(23).i32x4Shl().f32x4Mul();
  if (!zeroLow) return;
  c.localGet(x);
  k(EXP_LO).f32x4Ge().v128And();
}
