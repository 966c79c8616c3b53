/**
 * The kernels' WebAssembly module, generated here as bytecode (see ./builder.ts). It imports one memory
 * (`env.memory`) and `env.log` (Math.log, called once per row), and exports:
 *
 * - `gemm_R_W(ap, bp, cp, K, ldc)` for R in 1..4 rows and W in {4, 8} columns: the micro-kernels of
 *   C = A·B. `ap` points to a packed A panel (K × R, the R row values of each k adjacent), `bp` to a packed
 *   B panel (K × W, row-major), `cp` to the R × W block of C (row stride `ldc` bytes), which is overwritten.
 *   The R·W/4 accumulators stay in v128 registers; per k: W/4 vector loads of B, R splat loads of A,
 *   R·W/4 multiply-adds. K ≥ 1.
 * - `softmax(xp, op, rows, width, mode)`: over each row of a dense [rows, width] f32 block; mode 0 writes
 *   softmax, 1 log-softmax (both [rows, width] at op), 2 only the row's log-sum-exp (one f32 per row at op).
 *   Vectorised four lanes at a time, with scalar tails; exp is a Cephes-style polynomial (≈1 ulp), the
 *   row sum Kahan-compensated.
 */
import { type Code, F32, F64, I32, ModuleBuilder, V128 } from './builder.js';

export const GEMM_ROWS = [1, 2, 3, 4] as const;
export const GEMM_WIDTHS = [4, 8] as const;
export const gemmName = (rows: number, width: number) => `gemm_${rows}_${width}`;

function emitGemm(c: Code, R: number, W: number): void {
  const [ap, bp, cp, k, ldc] = [0, 1, 2, 3, 4];
  const V = W / 4;
  const acc: number[] = [];
  for (let i = 0; i < R * V; i++) acc.push(c.local(V128));
  const b: number[] = [];
  for (let v = 0; v < V; v++) b.push(c.local(V128));
  const a = c.local(V128);
  // Accumulators start at zero (locals are zero-initialised), so C is overwritten.
  c.loop();
  for (let v = 0; v < V; v++)
    c.localGet(bp)
      .v128Load(16 * v)
      .localSet(b[v]);
  for (let r = 0; r < R; r++) {
    c.localGet(ap)
      .v128Load32Splat(4 * r)
      .localSet(a);
    for (let v = 0; v < V; v++) {
      const x = acc[r * V + v];
      c.localGet(x).localGet(a).localGet(b[v]).f32x4Mul().f32x4Add().localSet(x);
    }
  }
  c.localGet(ap)
    .i32Const(4 * R)
    .i32Add()
    .localSet(ap);
  c.localGet(bp)
    .i32Const(16 * V)
    .i32Add()
    .localSet(bp);
  c.localGet(k).i32Const(1).i32Sub().localTee(k).brIf(0);
  c.end();
  for (let r = 0; r < R; r++) {
    for (let v = 0; v < V; v++)
      c.localGet(cp)
        .localGet(acc[r * V + v])
        .v128Store(16 * v);
    if (r + 1 < R) c.localGet(cp).localGet(ldc).i32Add().localSet(cp);
  }
}

const LOG2E = Math.LOG2E;
const EXP_C1 = 0.693359375;
const EXP_C2 = -2.1219444e-4;
const EXP_LO = -87.33654;
const EXP_POLY = [
  1.98756915e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
];

/**
 * exp of the v128 in local `x` (lanes ≤ 0 expected; below -87.3 and -Infinity give exactly 0), left on the
 * stack. x = n·ln2 + r with |r| ≤ ln2/2; exp(r) by the Cephes polynomial; 2^n built in the exponent bits.
 */
function emitExp(c: Code, x: number, t: { n: number; r: number }): void {
  c.localGet(x).f32x4Const(EXP_LO).f32x4Max().localSet(t.r);
  c.localGet(t.r).f32x4Const(LOG2E).f32x4Mul().f32x4Nearest().localSet(t.n);
  // r = x - n·C1 - n·C2 (C1 + C2 = ln 2; C1 has few bits, so n·C1 is exact).
  c.localGet(t.r).localGet(t.n).f32x4Const(EXP_C1).f32x4Mul().f32x4Sub();
  c.localGet(t.n).f32x4Const(EXP_C2).f32x4Mul().f32x4Sub().localSet(t.r);
  c.f32x4Const(EXP_POLY[0]);
  for (let i = 1; i < EXP_POLY.length; i++) c.localGet(t.r).f32x4Mul().f32x4Const(EXP_POLY[i]).f32x4Add();
  // p·r² + r + 1
  c.localGet(t.r).f32x4Mul().localGet(t.r).f32x4Mul().localGet(t.r).f32x4Add().f32x4Const(1).f32x4Add();
  // · 2^n: (n + 127) << 23 as f32 bits.
  c.localGet(t.n).i32x4TruncSatF32x4S().i32Const(127).i32x4Splat().i32x4Add().i32Const(23).i32x4Shl();
  c.f32x4Mul();
  // Zero where x < -87.3 (and for -Infinity); NaN lanes become 0 too (their row's max is NaN anyway).
  c.localGet(x).f32x4Const(EXP_LO).f32x4Ge().v128And();
}

/** Horizontal reduction of the v128 in `v` with a scalar f32 binary op, left on the stack. */
function emitHorizontal(c: Code, v: number, op: (c: Code) => void): void {
  c.localGet(v).f32x4ExtractLane(0).localGet(v).f32x4ExtractLane(1);
  op(c);
  c.localGet(v).f32x4ExtractLane(2).localGet(v).f32x4ExtractLane(3);
  op(c);
  op(c);
}

/**
 * Loops j over [0, width) in steps of 4 while j + 4 ≤ width, then by 1: `vec` and `scalar` emit the bodies
 * (with `p` = the byte offset of element j within the row, already computed). Leaves j = width.
 */
function emitRowLoop(
  c: Code,
  width: number,
  j: number,
  p: number,
  vec: () => void,
  scalar: () => void,
): void {
  c.i32Const(0).localSet(j);
  c.block().loop();
  c.localGet(width).localGet(j).i32Const(4).i32Add().i32LtS().brIf(1);
  c.localGet(j).i32Const(2).i32Shl().localSet(p);
  vec();
  c.localGet(j).i32Const(4).i32Add().localSet(j).br(0);
  c.end().end();
  c.block().loop();
  c.localGet(j).localGet(width).i32GeS().brIf(1);
  c.localGet(j).i32Const(2).i32Shl().localSet(p);
  scalar();
  c.localGet(j).i32Const(1).i32Add().localSet(j).br(0);
  c.end().end();
}

function emitSoftmax(c: Code, logFn: number): void {
  const [xp, op, rows, width, mode] = [0, 1, 2, 3, 4];
  const j = c.local(I32);
  const p = c.local(I32);
  const r = c.local(I32);
  const mx = c.local(F32);
  const sum = c.local(F64);
  const s = c.local(F32);
  const lsum = c.local(F64);
  const vm = c.local(V128);
  const vx = c.local(V128);
  const vs = c.local(V128);
  const vc = c.local(V128);
  const vt = c.local(V128);
  const tmp = { n: c.local(V128), r: c.local(V128) };
  const loadX = () => c.localGet(xp).localGet(p).i32Add();
  const addrO = () => c.localGet(op).localGet(p).i32Add();

  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);

  // Pass 1: the row max (f32x4.max and f32.max propagate NaN).
  c.f32x4Const(Number.NEGATIVE_INFINITY).localSet(vm);
  c.f32Const(Number.NEGATIVE_INFINITY).localSet(mx);
  emitRowLoop(
    c,
    width,
    j,
    p,
    () => loadX().v128Load().localGet(vm).f32x4Max().localSet(vm),
    () => loadX().f32Load().localGet(mx).f32Max().localSet(mx),
  );
  emitHorizontal(c, vm, (k) => k.f32Max());
  c.localGet(mx).f32Max().localSet(mx);
  // A row of -Infinity: shift by 0 instead, so exp gives 0s, the sum 0 and the log-sum-exp -Infinity.
  c.localGet(mx).f32Const(Number.NEGATIVE_INFINITY).f32Eq().if().f32Const(0).localSet(mx).end();

  // Pass 2: sum of exp(x - max), stored at op in softmax mode. Kahan-compensated per lane (sum vs,
  // compensation vc), the lanes and the scalar tail then added in f64: the sum is good to about 1 ulp.
  c.localGet(mx).f32x4Splat().localSet(vm);
  c.f32x4Const(0).localSet(vs);
  c.f32x4Const(0).localSet(vc);
  c.f64Const(0).localSet(sum);
  emitRowLoop(
    c,
    width,
    j,
    p,
    () => {
      loadX().v128Load().localGet(vm).f32x4Sub().localSet(vx);
      emitExp(c, vx, tmp);
      c.localSet(vx);
      c.localGet(mode).i32Eqz().if();
      addrO().localGet(vx).v128Store();
      c.end();
      // y = e - vc; t = vs + y; vc = (t - vs) - y; vs = t (y kept in vx).
      c.localGet(vx).localGet(vc).f32x4Sub().localSet(vx);
      c.localGet(vs).localGet(vx).f32x4Add().localSet(vt);
      c.localGet(vt).localGet(vs).f32x4Sub().localGet(vx).f32x4Sub().localSet(vc);
      c.localGet(vt).localSet(vs);
    },
    () => {
      loadX().f32Load().localGet(mx).f32Sub().f32x4Splat().localSet(vx);
      emitExp(c, vx, tmp);
      c.f32x4ExtractLane(0).localSet(s);
      c.localGet(sum).localGet(s).f64PromoteF32().f64Add().localSet(sum);
      c.localGet(mode).i32Eqz().if();
      addrO().localGet(s).f32Store();
      c.end();
    },
  );
  for (let lane = 0; lane < 4; lane++) {
    c.localGet(sum).localGet(vs).f32x4ExtractLane(lane).f64PromoteF32().f64Add();
    c.localGet(vc).f32x4ExtractLane(lane).f64PromoteF32().f64Sub().localSet(sum);
  }

  // Pass 3.
  c.localGet(mode).i32Eqz().if();
  // softmax: e · (1 / sum)
  c.f64Const(1).localGet(sum).f64Div().f32DemoteF64().localTee(s).f32x4Splat().localSet(vs);
  emitRowLoop(
    c,
    width,
    j,
    p,
    () => {
      addrO();
      addrO().v128Load().localGet(vs).f32x4Mul().v128Store();
    },
    () => {
      addrO();
      addrO().f32Load().localGet(s).f32Mul().f32Store();
    },
  );
  c.else();
  // log(sum), via the imported Math.log (in f64).
  c.localGet(sum).call(logFn).localSet(lsum);
  c.localGet(lsum).f32DemoteF64().localSet(s);
  c.localGet(mode).i32Const(1).i32Ne().if();
  // log-sum-exp only: one f32 per row.
  c.localGet(op).localGet(r).i32Const(2).i32Shl().i32Add();
  c.localGet(mx).f64PromoteF32().localGet(lsum).f64Add().f32DemoteF64().f32Store();
  c.else();
  // log-softmax: (x - max) - log(sum)
  c.localGet(s).f32x4Splat().localSet(vs);
  emitRowLoop(
    c,
    width,
    j,
    p,
    () => {
      addrO();
      loadX().v128Load().localGet(vm).f32x4Sub().localGet(vs).f32x4Sub().v128Store();
    },
    () => {
      addrO();
      loadX().f32Load().localGet(mx).f32Sub().localGet(s).f32Sub().f32Store();
    },
  );
  c.end();
  c.end();

  // Next row: x advances by a row; the output by a row (modes 0, 1) or not at all (mode 2 indexes by r).
  c.localGet(xp).localGet(width).i32Const(2).i32Shl().i32Add().localSet(xp);
  c.localGet(mode).i32Const(2).i32Ne().if();
  c.localGet(op).localGet(width).i32Const(2).i32Shl().i32Add().localSet(op);
  c.end();
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

/** Builds the module's bytes. */
export function buildKernelModule(): Uint8Array {
  const m = new ModuleBuilder();
  const logFn = m.importFunc('env', 'log', [F64], [F64]);
  m.importMemory('env', 'memory', 1);
  for (const R of GEMM_ROWS)
    for (const W of GEMM_WIDTHS)
      m.func([I32, I32, I32, I32, I32], [], (c) => emitGemm(c, R, W), gemmName(R, W));
  m.func([I32, I32, I32, I32, I32], [], (c) => emitSoftmax(c, logFn), 'softmax');
  return m.build();
}
