/**
 * `pack_b(src, K, N, rs, cs, dst)`: B (K × N at byte address `src`, byte strides `rs` between rows and `cs`
 * between columns) into the panels of ./gemm.ts: 8 columns then 4, each K × W row-major at `dst`, the last
 * panel zero-padded to its width. The same layout as the JavaScript packB of ../matmul.ts, bit for bit (a
 * float is copied as it is), for a B that lives in the wasm memory: the JavaScript loop over a shared
 * Float32Array was a third of a batch-1 decode step (the tied output projection, a transposed 64 × 4,096 B,
 * is packed on every token). Where B's k is contiguous (rs = 4, a transposed weight) and a panel is whole,
 * four k at a time are read as one vector per column and transposed in registers (4 × 4 blocks of shuffles).
 *
 * `pack_a(src, M, K, rs, cs, dst)`: A (M × K, byte strides as above) into the panels of up to 4 rows, each
 * K × R with a column's R values adjacent, as the JavaScript packA: every matmul packs its A (in the RL
 * update, activations of thousands of rows), a tenth of the update's time in JavaScript. A whole panel of
 * a row-major A is read four k at a time and transposed as above; one of a transposed A (rs = 4, as in a
 * weight gradient Xᵀ·dY) is read one vector per k.
 */

const LO = lanes([0, 4, 1, 5]);
const HI = lanes([2, 6, 3, 7]);
const FIRST = lanes([0, 1, 4, 5]);
const SECOND = lanes([2, 3, 6, 7]);

/**
 * Four k of a whole panel of 4·groups columns: loads column c's four values from `p + c·cs` (p: B's element
 * (k, j0)), transposes each group's 4 × 4 block, and stores the four panel rows from q (row stride Wb).
 */
function emitBlock(
  c: Code,
  groups: number,
  p: number,
  cs: number,
  q: number,
  Wb: number,
  v: number[],
  t: number[],
) {
  const at = c.local(I32);
  c.localGet(p).localSet(at);
  for (let col = 0; col < 4 * groups; col++) {
    c.localGet(at).v128Load().localSet(v[col]);
    c.localGet(at).localGet(cs).i32Add().localSet(at);
  }
  for (let g = 0; g < groups; g++) {
    const [a, b, x, d] = v.slice(4 * g, 4 * g + 4);
    c.localGet(a).localGet(b).i8x16Shuffle(LO).localSet(t[0]);
    c.localGet(a).localGet(b).i8x16Shuffle(HI).localSet(t[1]);
    c.localGet(x).localGet(d).i8x16Shuffle(LO).localSet(t[2]);
    c.localGet(x).localGet(d).i8x16Shuffle(HI).localSet(t[3]);
    const rows: [number, number, number[]][] = [
      [t[0], t[2], FIRST],
      [t[0], t[2], SECOND],
      [t[1], t[3], FIRST],
      [t[1], t[3], SECOND],
    ];
    c.localGet(q).localSet(at);
    for (const [r, [lo, hi, mask]] of rows.entries()) {
      if (r > 0) c.localGet(at).localGet(Wb).i32Add().localSet(at);
      c.localGet(at)
        .localGet(lo)
        .localGet(hi)
        .i8x16Shuffle(mask)
        .v128Store(16 * g);
    }
  }
}
import { type Code, F32, I32, type ModuleBuilder, V128 } from '../builder.js';
import { lanes, loopWhile } from './common.js';

export function addPack(m: ModuleBuilder): void {
  m.func(
    [I32, I32, I32, I32, I32, I32],
    [],
    (c) => {
      const [src, K, N, rs, cs, dst] = [0, 1, 2, 3, 4, 5];
      const j0 = c.local(I32);
      const Wb = c.local(I32);
      const wb = c.local(I32);
      const k = c.local(I32);
      const cb = c.local(I32);
      const row = c.local(I32);
      const p = c.local(I32);
      const q = c.local(I32);
      const zero = c.local(F32);
      const v = Array.from({ length: 8 }, () => c.local(V128));
      const t = Array.from({ length: 4 }, () => c.local(V128));
      c.localGet(dst).localSet(q);
      // while (j0 < N): a panel of 8 columns (4 when fewer than 8 are left), of which the first w are real;
      // Wb and wb are these widths in bytes. q walks the panels' rows in order: panel j0 starts at j0·K.
      c.block().loop();
      c.localGet(j0).localGet(N).i32GeS().brIf(1);
      c.i32Const(32)
        .i32Const(16)
        .localGet(N)
        .localGet(j0)
        .i32Sub()
        .i32Const(8)
        .i32GeS()
        .select()
        .localSet(Wb);
      c.localGet(Wb).localGet(N).localGet(j0).i32Sub().i32Const(4).i32Mul().localTee(wb);
      c.localGet(Wb).localGet(wb).i32LeS().select().localSet(wb);
      c.localGet(src).localGet(j0).localGet(cs).i32Mul().i32Add().localSet(row);
      c.i32Const(0).localSet(k);
      // A whole panel of a B with contiguous k: four k per step, transposed in registers.
      c.localGet(rs).i32Const(4).i32Eq().localGet(wb).localGet(Wb).i32Eq().i32And().if();
      loopWhile(c, k, K, 4, () => {
        c.localGet(Wb).i32Const(32).i32Eq().if();
        emitBlock(c, 2, row, cs, q, Wb, v, t);
        c.else();
        emitBlock(c, 1, row, cs, q, Wb, v, t);
        c.end();
        c.localGet(q).localGet(Wb).i32Const(4).i32Mul().i32Add().localSet(q);
        c.localGet(row).i32Const(16).i32Add().localSet(row);
      });
      c.end();
      loopWhile(c, k, K, 1, () => {
        c.localGet(row).localSet(p);
        c.i32Const(0).localSet(cb);
        loopWhile(c, cb, wb, 4, () => {
          c.localGet(q).localGet(cb).i32Add().localGet(p).f32Load().f32Store();
          c.localGet(p).localGet(cs).i32Add().localSet(p);
        });
        loopWhile(c, cb, Wb, 4, () => {
          c.localGet(q).localGet(cb).i32Add().localGet(zero).f32Store();
        });
        c.localGet(q).localGet(Wb).i32Add().localSet(q);
        c.localGet(row).localGet(rs).i32Add().localSet(row);
      });
      c.localGet(j0).localGet(Wb).i32Const(4).i32DivS().i32Add().localSet(j0).br(0);
      c.end().end();
    },
    'pack_b',
  );
}

export function addPackA(m: ModuleBuilder): void {
  m.func(
    [I32, I32, I32, I32, I32, I32],
    [],
    (c) => {
      const [src, M, K, rs, cs, dst] = [0, 1, 2, 3, 4, 5];
      const [i0, Rb, k, r, row, p, q, stride] = Array.from({ length: 8 }, () => c.local(I32));
      const v = Array.from({ length: 4 }, () => c.local(V128));
      const t = Array.from({ length: 4 }, () => c.local(V128));
      c.i32Const(16).localSet(stride);
      c.localGet(dst).localSet(q);
      // while (i0 < M): a panel of R = min(4, M − i0) rows (Rb = 4R bytes); q walks the panels in order.
      c.block().loop();
      c.localGet(i0).localGet(M).i32GeS().brIf(1);
      c.i32Const(16).localGet(M).localGet(i0).i32Sub().i32Const(4).i32Mul().localTee(Rb);
      c.localGet(Rb).i32Const(16).i32GtS().select().localSet(Rb);
      c.localGet(src).localGet(i0).localGet(rs).i32Mul().i32Add().localSet(row);
      c.i32Const(0).localSet(k);
      c.localGet(Rb).i32Const(16).i32Eq().if();
      // A whole panel, k contiguous: four k of the four rows per step, transposed in registers.
      c.localGet(cs).i32Const(4).i32Eq().if();
      loopWhile(c, k, K, 4, () => {
        emitBlock(c, 1, row, rs, q, stride, v, t);
        c.localGet(q).i32Const(64).i32Add().localSet(q);
        c.localGet(row).i32Const(16).i32Add().localSet(row);
      });
      c.end();
      // A whole panel, rows contiguous (a transposed A): one vector per k.
      c.localGet(rs).i32Const(4).i32Eq().if();
      loopWhile(c, k, K, 1, () => {
        c.localGet(q).localGet(row).v128Load().v128Store();
        c.localGet(q).i32Const(16).i32Add().localSet(q);
        c.localGet(row).localGet(cs).i32Add().localSet(row);
      });
      c.end();
      c.end();
      // The rest, one float at a time.
      loopWhile(c, k, K, 1, () => {
        c.localGet(row).localSet(p);
        c.i32Const(0).localSet(r);
        loopWhile(c, r, Rb, 4, () => {
          c.localGet(q).localGet(r).i32Add().localGet(p).f32Load().f32Store();
          c.localGet(p).localGet(rs).i32Add().localSet(p);
        });
        c.localGet(q).localGet(Rb).i32Add().localSet(q);
        c.localGet(row).localGet(cs).i32Add().localSet(row);
      });
      c.localGet(i0).i32Const(4).i32Add().localSet(i0).br(0);
      c.end().end();
    },
    'pack_a',
  );
}
