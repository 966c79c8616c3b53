/**
 * Row kernels over dense [rows, width] f32 blocks (pointers are byte addresses):
 *
 * - `softmax_<mode>(xp, op, rows, width)`: mode 0 writes softmax, 1 log-softmax (both [rows, width] at
 *   op), 2 only each row's log-sum-exp (one f32 per row at op). The row sum gathers f32 partials of at most
 *   16 terms into f64: within a few ulps. Modes 1 and 2 only sum their exps; every mode takes the faster
 *   `emitExpFast` (./common.ts: a relative error of about 1e-7 where it matters), softmax with exact zeros.
 * - `softmax_bwd(yp, gp, op, rows, width, log)`: from the forward output y and its gradient g:
 *   softmax: y·(g − Σ g·y); log-softmax: g − exp(y)·Σ g.
 * - `logprobs_bwd(xp, lp, gp, op, rows, width)`: −g[r]·exp(x − lse[r]) (the caller adds g[r] at the target).
 */
import { type Code, F32, F64, I32, type ModuleBuilder, V128 } from '../builder.js';
import {
  emitExp,
  emitExpFast,
  expTemps,
  horizontal,
  horizontalSumF64,
  loopWhile,
  rowLoop,
  rowLoopUnrolled,
} from './common.js';

/** The softmax kernel of a mode: 0 softmax, 1 log-softmax, 2 log-sum-exp only. */
export const softmaxName = (mode: number) => `softmax_${mode}`;

/** Independent accumulator chains in the max and exp-sum passes. */
const CHAINS = 4;
/** Vectors per block of the exp-sum pass (each chain takes BLOCK / CHAINS of them). */
const BLOCK = 16;
/** i8x16.shuffle lanes that bring a v128's high 8 bytes to its low half. */
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];

/** The softmax kernel for one `mode` (a constant, so the loops carry no mode test). */
function emitSoftmax(c: Code, logFn: number, modeValue: number): void {
  const [xp, op, rows, width] = [0, 1, 2, 3];
  const [p, r, nb] = [c.local(I32), c.local(I32), c.local(I32)];
  const mx = c.local(F32);
  const sum = c.local(F64);
  const s = c.local(F32);
  const lsum = c.local(F64);
  const empty = c.local(I32);
  const [vm, vx, vt, vnan, d0, d1] = new Array(6).fill(0).map(() => c.local(V128));
  const chains = (n: number) => new Array(n).fill(0).map(() => c.local(V128));
  const [ms, ss] = [chains(CHAINS), chains(CHAINS)];
  const mode = modeValue;
  const tmp = expTemps(c);
  const loadX = () => c.localGet(xp).localGet(p).i32Add();
  const addrO = () => c.localGet(op).localGet(p).i32Add();
  c.localGet(width).i32Const(2).i32Shl().localSet(nb);

  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);

  // Pass 1: the row max, in CHAINS chains of pmax (one maxps each; NaN ignored, as the TS kernel's `>`
  // does). In softmax mode a NaN flag too: a row with a NaN gets a NaN max, which makes its every output NaN
  // as in the TS kernel; in the other modes the NaN reaches the sum through emitExpFast instead.
  for (const m of ms) c.f32x4SplatConst(Number.NEGATIVE_INFINITY).localSet(m);
  c.f32x4SplatConst(0).localSet(vnan);
  c.f32Const(Number.NEGATIVE_INFINITY).localSet(mx);
  rowLoopUnrolled(
    c,
    p,
    nb,
    CHAINS,
    (offset, chain) => {
      loadX().v128Load(offset).localTee(vx).localGet(ms[chain]).f32x4Pmax().localSet(ms[chain]);
      if (mode === 0) c.localGet(vnan).localGet(vx).localGet(vx).f32x4Ne().v128Or().localSet(vnan);
    },
    () => {
      loadX().f32Load().localTee(s).localGet(mx).f32Max().localSet(mx);
      c.localGet(vnan).localGet(s).f32x4Splat().localGet(s).f32x4Splat().f32x4Ne().v128Or().localSet(vnan);
    },
  );
  c.localGet(ms[0]);
  for (let i = 1; i < CHAINS; i++) c.localGet(ms[i]).f32x4Max();
  c.localSet(vm);
  horizontal(c, vm, (k) => k.f32Max());
  c.localGet(mx).f32Max().localSet(mx);
  c.localGet(vnan).v128AnyTrue().if().f32Const(Number.NaN).localSet(mx).end();
  // A row of -Infinity: shift by 0 instead, and its sum is 0 (so the log-sum-exp is -Infinity).
  c.i32Const(0).localSet(empty);
  c.localGet(mx).f32Const(Number.NEGATIVE_INFINITY).f32Eq().if();
  c.f32Const(0).localSet(mx).i32Const(1).localSet(empty);
  c.end();

  // Pass 2: sum of exp(x - max), stored at op in softmax mode. Blocks of BLOCK vectors go round CHAINS
  // f32 accumulator chains; at the end of a block the chains are added pairwise and the four lane sums
  // added into f64 (so an f32 partial never sums more than 16 terms: within a few ulps).
  // Leftover vectors go to chain 0 and its last flush, leftover floats straight into the f64 sum.
  const expInto = (out: number) => {
    emitExpFast(c, vx, tmp, mode === 0);
    c.localSet(out);
  };
  const accumulate = (offset: number, chain: number) => {
    loadX().v128Load(offset).localGet(vm).f32x4Sub().localSet(vx);
    expInto(vt);
    if (mode === 0) addrO().localGet(vt).v128Store(offset);
    c.localGet(ss[chain]).localGet(vt).f32x4Add().localSet(ss[chain]);
  };
  const flush = () => {
    c.localGet(ss[0]).localGet(ss[1]).f32x4Add().localGet(ss[2]).localGet(ss[3]).f32x4Add().f32x4Add();
    c.localTee(vt).f64x2PromoteLowF32x4().localGet(d0).f64x2Add().localSet(d0);
    c.localGet(vt).localGet(vt).i8x16Shuffle(HIGH_HALF).f64x2PromoteLowF32x4();
    c.localGet(d1).f64x2Add().localSet(d1);
    for (const acc of ss) c.f32x4SplatConst(0).localSet(acc);
  };
  c.localGet(mx).f32x4Splat().localSet(vm);
  for (const v of [...ss, d0, d1]) c.f32x4SplatConst(0).localSet(v);
  c.f64Const(0).localSet(sum);
  c.i32Const(0).localSet(p);
  loopWhile(c, p, nb, 16 * BLOCK, () => {
    for (let i = 0; i < BLOCK; i++) accumulate(16 * i, i % CHAINS);
    flush();
  });
  loopWhile(c, p, nb, 16, () => accumulate(0, 0));
  flush();
  loopWhile(c, p, nb, 4, () => {
    loadX().f32Load().localGet(mx).f32Sub().f32x4Splat().localSet(vx);
    expInto(vt);
    c.localGet(vt).f32x4ExtractLane(0).localSet(s);
    c.localGet(sum).localGet(s).f64PromoteF32().f64Add().localSet(sum);
    if (mode === 0) addrO().localGet(s).f32Store();
  });
  for (const d of [d0, d1])
    for (let lane = 0; lane < 2; lane++)
      c.localGet(sum).localGet(d).f64x2ExtractLane(lane).f64Add().localSet(sum);
  c.localGet(empty).if().f64Const(0).localSet(sum).end();

  // Pass 3.
  if (mode === 0) {
    // softmax: e · (1 / sum)
    c.f64Const(1).localGet(sum).f64Div().f32DemoteF64().localTee(s).f32x4Splat().localSet(vt);
    rowLoop(
      c,
      p,
      nb,
      () => {
        addrO();
        addrO().v128Load().localGet(vt).f32x4Mul().v128Store();
      },
      () => {
        addrO();
        addrO().f32Load().localGet(s).f32Mul().f32Store();
      },
    );
  } else {
    // log(sum), via the imported Math.log (in f64).
    c.localGet(sum).call(logFn).localSet(lsum);
    if (mode === 2) {
      // log-sum-exp only: one f32 per row.
      c.localGet(op).localGet(r).i32Const(2).i32Shl().i32Add();
      c.localGet(mx).f64PromoteF32().localGet(lsum).f64Add().f32DemoteF64().f32Store();
    } else {
      // log-softmax: (x - max) - log(sum)
      c.localGet(lsum).f32DemoteF64().localTee(s).f32x4Splat().localSet(vt);
      rowLoop(
        c,
        p,
        nb,
        () => {
          addrO();
          loadX().v128Load().localGet(vm).f32x4Sub().localGet(vt).f32x4Sub().v128Store();
        },
        () => {
          addrO();
          loadX().f32Load().localGet(mx).f32Sub().localGet(s).f32Sub().f32Store();
        },
      );
    }
  }

  // Next row: x advances by a row; the output by a row (modes 0, 1) or not at all (mode 2 indexes by r).
  c.localGet(xp).localGet(nb).i32Add().localSet(xp);
  if (mode !== 2) c.localGet(op).localGet(nb).i32Add().localSet(op);
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

function forRows(c: Code, rows: number, nb: number, ptrs: number[], body: () => void): void {
  const r = c.local(I32);
  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);
  body();
  for (const q of ptrs) c.localGet(q).localGet(nb).i32Add().localSet(q);
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

function emitSoftmaxBackward(c: Code): void {
  const [yp, gp, op, rows, width, log] = [0, 1, 2, 3, 4, 5];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const [dot, e] = [c.local(F32), c.local(F32)];
  const [vd, vx] = [c.local(V128), c.local(V128)];
  const tmp = expTemps(c);
  const at = (base: number) => c.localGet(base).localGet(p).i32Add();
  c.localGet(width).i32Const(2).i32Shl().localSet(nb);
  forRows(c, rows, nb, [yp, gp, op], () => {
    // dot = Σ g (log-softmax) or Σ g·y (softmax): lanes in f32, combined in f64.
    c.f32x4SplatConst(0).localSet(vd);
    c.f32Const(0).localSet(dot);
    c.localGet(log).if();
    rowLoop(
      c,
      p,
      nb,
      () => {
        c.localGet(vd);
        at(gp).v128Load().f32x4Add().localSet(vd);
      },
      () => {
        c.localGet(dot);
        at(gp).f32Load().f32Add().localSet(dot);
      },
    );
    c.else();
    rowLoop(
      c,
      p,
      nb,
      () => {
        c.localGet(vd);
        at(gp).v128Load();
        at(yp).v128Load().f32x4Mul().f32x4Add().localSet(vd);
      },
      () => {
        c.localGet(dot);
        at(gp).f32Load();
        at(yp).f32Load().f32Mul().f32Add().localSet(dot);
      },
    );
    c.end();
    horizontalSumF64(c, vd);
    c.localGet(dot).f64PromoteF32().f64Add().f32DemoteF64().localSet(dot);
    c.localGet(dot).f32x4Splat().localSet(vd);
    c.localGet(log).if();
    rowLoop(
      c,
      p,
      nb,
      () => {
        at(op);
        at(yp).v128Load().localSet(vx);
        emitExp(c, vx, tmp);
        c.localGet(vd).f32x4Mul().localSet(vx);
        at(gp).v128Load().localGet(vx).f32x4Sub().v128Store();
      },
      () => {
        at(op);
        at(yp).f32Load().f32x4Splat().localSet(vx);
        emitExp(c, vx, tmp);
        c.f32x4ExtractLane(0).localGet(dot).f32Mul().localSet(e);
        at(gp).f32Load().localGet(e).f32Sub().f32Store();
      },
    );
    c.else();
    rowLoop(
      c,
      p,
      nb,
      () => {
        at(op);
        at(yp).v128Load();
        at(gp).v128Load().localGet(vd).f32x4Sub().f32x4Mul().v128Store();
      },
      () => {
        at(op);
        at(yp).f32Load();
        at(gp).f32Load().localGet(dot).f32Sub().f32Mul().f32Store();
      },
    );
    c.end();
  });
}

function emitLogprobsBackward(c: Code): void {
  const [xp, lp, gp, op, rows, width] = [0, 1, 2, 3, 4, 5];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const [vz, vg, vx] = [c.local(V128), c.local(V128), c.local(V128)];
  const tmp = expTemps(c);
  const at = (base: number) => c.localGet(base).localGet(p).i32Add();
  c.localGet(width).i32Const(2).i32Shl().localSet(nb);
  forRows(c, rows, nb, [xp, op], () => {
    c.localGet(lp).f32Load().f32x4Splat().localSet(vz);
    c.localGet(gp).f32Load().f32Neg().f32x4Splat().localSet(vg);
    c.localGet(lp).i32Const(4).i32Add().localSet(lp);
    c.localGet(gp).i32Const(4).i32Add().localSet(gp);
    const body = (vector: boolean) => () => {
      at(op);
      if (vector) at(xp).v128Load();
      else at(xp).f32Load().f32x4Splat();
      c.localGet(vz).f32x4Sub().localSet(vx);
      emitExp(c, vx, tmp);
      c.localGet(vg).f32x4Mul();
      if (vector) c.v128Store();
      else c.f32x4ExtractLane(0).f32Store();
    };
    rowLoop(c, p, nb, body(true), body(false));
  });
}

/** Adds `softmax`, `softmax_bwd` and `logprobs_bwd` to the module. */
export function addSoftmax(m: ModuleBuilder, logFn: number): void {
  for (const mode of [0, 1, 2])
    m.func([I32, I32, I32, I32], [], (c) => emitSoftmax(c, logFn, mode), softmaxName(mode));
  m.func([I32, I32, I32, I32, I32, I32], [], emitSoftmaxBackward, 'softmax_bwd');
  m.func([I32, I32, I32, I32, I32, I32], [], emitLogprobsBackward, 'logprobs_bwd');
}
