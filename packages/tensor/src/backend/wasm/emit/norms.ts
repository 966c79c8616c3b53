/**
 * Layer norm (centred) and RMS norm (not centred) over dense [rows, d] f32 rows; the weight and bias are
 * always given (the caller passes ones and zeros where the op has none).
 *
 * - `norm_fwd(xp, wp, bp, op, mp, rp, rows, d, eps, centred)`: y = (x − mean)·rstd·w + b, and one mean
 *   (0 for RMS) and rstd per row at mp, rp. Sums are four f32 lanes combined in f64.
 * - `norm_bwd(xp, wp, mp, rp, gp, dxp, dwp, dbp, rows, d, centred)`: with xhat = (x − mean)·rstd and
 *   gy = g·w: dx = rstd·(gy − mean(gy) − xhat·mean(gy·xhat)) (RMS drops mean(gy)); adds Σ_rows g·xhat and
 *   Σ_rows g into the [d] partial sums at dwp, dbp (the caller reduces the partials of all calls in a fixed
 *   order, so the result does not depend on how rows were shared between threads).
 */
import { type Code, F32, F64, I32, type ModuleBuilder, V128 } from '../builder.js';
import { horizontalSumF64, rowLoop } from './common.js';

/** A load of the f32 at base + p as a v128 (vector) or splat (scalar tail). */
function load(c: Code, base: number, p: number, vector: boolean): Code {
  c.localGet(base).localGet(p).i32Add();
  return vector ? c.v128Load() : c.f32Load().f32x4Splat();
}

function store(c: Code, base: number, p: number, vector: boolean, value: () => void): void {
  c.localGet(base).localGet(p).i32Add();
  value();
  if (vector) c.v128Store();
  else c.f32x4ExtractLane(0).f32Store();
}

/** Σ over the row of the v128 that `term` leaves on the stack, into f64 local `out`. */
function rowSum(
  c: Code,
  p: number,
  nb: number,
  acc: number,
  out: number,
  term: (vector: boolean) => void,
): void {
  c.f32x4SplatConst(0).localSet(acc);
  c.f64Const(0).localSet(out);
  rowLoop(
    c,
    p,
    nb,
    () => {
      c.localGet(acc);
      term(true);
      c.f32x4Add().localSet(acc);
    },
    () => {
      c.localGet(out);
      term(false);
      c.f32x4ExtractLane(0).f64PromoteF32().f64Add().localSet(out);
    },
  );
  c.localGet(out);
  horizontalSumF64(c, acc);
  c.f64Add().localSet(out);
}

function forRows(c: Code, rows: number, body: (r: number) => void): void {
  const r = c.local(I32);
  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);
  body(r);
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

function emitForward(c: Code): void {
  const [xp, wp, bp, op, mp, rp, rows, d, eps, centred] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const sum = c.local(F64);
  const [vacc, vm, vr] = [c.local(V128), c.local(V128), c.local(V128)];
  const [mean, rstd] = [c.local(F32), c.local(F32)];
  c.localGet(d).i32Const(2).i32Shl().localSet(nb);
  forRows(c, rows, (r) => {
    c.f32Const(0).localSet(mean);
    c.localGet(centred).if();
    rowSum(c, p, nb, vacc, sum, (v) => load(c, xp, p, v));
    c.localGet(sum).localGet(d).f64ConvertI32S().f64Div().f32DemoteF64().localSet(mean);
    c.end();
    c.localGet(mean).f32x4Splat().localSet(vm);
    rowSum(c, p, nb, vacc, sum, (v) => {
      load(c, xp, p, v).localGet(vm).f32x4Sub().localSet(vr);
      c.localGet(vr).localGet(vr).f32x4Mul();
    });
    // rstd = 1 / sqrt(var + eps), in f64.
    c.f64Const(1);
    c.localGet(sum).localGet(d).f64ConvertI32S().f64Div().localGet(eps).f64PromoteF32().f64Add().f64Sqrt();
    c.f64Div().f32DemoteF64().localSet(rstd);
    c.localGet(mp).localGet(r).i32Const(2).i32Shl().i32Add().localGet(mean).f32Store();
    c.localGet(rp).localGet(r).i32Const(2).i32Shl().i32Add().localGet(rstd).f32Store();
    c.localGet(rstd).f32x4Splat().localSet(vr);
    const y = (v: boolean) => () =>
      store(c, op, p, v, () => {
        load(c, xp, p, v).localGet(vm).f32x4Sub().localGet(vr).f32x4Mul();
        load(c, wp, p, v).f32x4Mul();
        load(c, bp, p, v).f32x4Add();
      });
    rowLoop(c, p, nb, y(true), y(false));
    c.localGet(xp).localGet(nb).i32Add().localSet(xp);
    c.localGet(op).localGet(nb).i32Add().localSet(op);
  });
}

function emitBackward(c: Code): void {
  const [xp, wp, mp, rp, gp, dxp, dwp, dbp, rows, d, centred] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const [sumG, sumGX] = [c.local(F64), c.local(F64)];
  const [vm, vr, vx, vg, vgy, va, vb] = new Array(7).fill(0).map(() => c.local(V128));
  const scalar = c.local(F64);
  c.localGet(d).i32Const(2).i32Shl().localSet(nb);
  forRows(c, rows, (r) => {
    c.localGet(mp).localGet(r).i32Const(2).i32Shl().i32Add().f32Load().f32x4Splat().localSet(vm);
    c.localGet(rp).localGet(r).i32Const(2).i32Shl().i32Add().f32Load().f32x4Splat().localSet(vr);
    // xhat, g and gy of element p into vx, vg, vgy.
    const terms = (v: boolean) => {
      load(c, xp, p, v).localGet(vm).f32x4Sub().localGet(vr).f32x4Mul().localSet(vx);
      load(c, gp, p, v).localSet(vg);
      c.localGet(vg);
      load(c, wp, p, v).f32x4Mul().localSet(vgy);
    };
    // Pass 1: the two row sums (lanes in f32, combined in f64) and the weight/bias partials.
    c.f32x4SplatConst(0).localSet(va);
    c.f32x4SplatConst(0).localSet(vb);
    c.f64Const(0).localSet(sumG);
    c.f64Const(0).localSet(sumGX);
    const pass1 = (v: boolean) => () => {
      terms(v);
      if (v) {
        c.localGet(va).localGet(vgy).f32x4Add().localSet(va);
        c.localGet(vb).localGet(vgy).localGet(vx).f32x4Mul().f32x4Add().localSet(vb);
      } else {
        c.localGet(sumG).localGet(vgy).f32x4ExtractLane(0).f64PromoteF32().f64Add().localSet(sumG);
        c.localGet(sumGX).localGet(vgy).localGet(vx).f32x4Mul().f32x4ExtractLane(0).f64PromoteF32();
        c.f64Add().localSet(sumGX);
      }
      store(c, dwp, p, v, () => {
        load(c, dwp, p, v).localGet(vg).localGet(vx).f32x4Mul().f32x4Add();
      });
      store(c, dbp, p, v, () => {
        load(c, dbp, p, v).localGet(vg).f32x4Add();
      });
    };
    rowLoop(c, p, nb, pass1(true), pass1(false));
    c.localGet(sumG);
    horizontalSumF64(c, va);
    c.f64Add().localSet(sumG);
    c.localGet(sumGX);
    horizontalSumF64(c, vb);
    c.f64Add().localSet(sumGX);
    // va = mean(gy) (0 for RMS), vb = mean(gy·xhat)
    c.f64Const(0).localSet(scalar);
    c.localGet(centred).if();
    c.localGet(sumG).localGet(d).f64ConvertI32S().f64Div().localSet(scalar);
    c.end();
    c.localGet(scalar).f32DemoteF64().f32x4Splat().localSet(va);
    c.localGet(sumGX).localGet(d).f64ConvertI32S().f64Div().f32DemoteF64().f32x4Splat().localSet(vb);
    const pass2 = (v: boolean) => () => {
      terms(v);
      store(c, dxp, p, v, () => {
        c.localGet(vr);
        c.localGet(vgy).localGet(va).f32x4Sub().localGet(vx).localGet(vb).f32x4Mul().f32x4Sub();
        c.f32x4Mul();
      });
    };
    rowLoop(c, p, nb, pass2(true), pass2(false));
    for (const q of [xp, gp, dxp]) c.localGet(q).localGet(nb).i32Add().localSet(q);
  });
}

export function addNorms(m: ModuleBuilder): void {
  m.func([I32, I32, I32, I32, I32, I32, I32, I32, F32, I32], [], emitForward, 'norm_fwd');
  m.func([I32, I32, I32, I32, I32, I32, I32, I32, I32, I32, I32], [], emitBackward, 'norm_bwd');
}
