/**
 * C = A·B on packed panels (the packing is in ../matmul.ts):
 *
 * - `gemm_R_W(ap, bp, cp, K, ldc, more)` for R in 1..4 rows and W in {4, 8} columns: the micro-kernels.
 *   `ap` points to a packed A panel (K × R, the R row values of each k adjacent), `bp` to a packed B panel
 *   (K × W, row-major), `cp` to the R × W block of C (row stride `ldc` bytes), which is overwritten, or
 *   added to when `more` is nonzero. The R·W/4 accumulators stay in v128 registers; per k: W/4 vector loads
 *   of B, R splat loads of A, R·W/4 multiply-adds (one `f32x4.relaxed_madd` each where the engine has
 *   relaxed SIMD, else a multiply and an add, rounded twice). K ≥ 1.
 * - `gemm_block(ap, bp, cp, M, N, K, ldc)`: the loop nest over a block of M rows (A panels from `ap`, the
 *   block's rows of C from `cp`) and all N columns, in blocks of KC values of k: one B panel's block stays
 *   hot in L1 while the A panels stream past it (a whole panel of a long K, 2,504 × 8 floats, would not fit
 *   L1 and was re-read from L2 for every A panel). A thread's share of a matmul is one such call, so every
 *   element of C is computed by the same micro-kernel, with the same k order (the blocks of k continue the
 *   same f32 accumulators through C), whichever thread runs it.
 */
import { type Code, I32, type ModuleBuilder, V128 } from '../builder.js';
import { loopWhile } from './common.js';

export const GEMM_ROWS = [1, 2, 3, 4] as const;
export const GEMM_WIDTHS = [4, 8] as const;
export const gemmName = (rows: number, width: number) => `gemm_${rows}_${width}`;
/** Values of k per block: a B panel's block is KC·32 bytes (8 KB), well inside L1. */
const KC = 256;

function emitMicro(c: Code, R: number, W: number, relaxed: boolean): void {
  const [ap, bp, cp, k, ldc, more] = [0, 1, 2, 3, 4, 5];
  const V = W / 4;
  const acc: number[] = [];
  for (let i = 0; i < R * V; i++) acc.push(c.local(V128));
  const b: number[] = [];
  for (let v = 0; v < V; v++) b.push(c.local(V128));
  const a = c.local(V128);
  const row = c.local(I32);
  // Accumulators start at zero (locals are zero-initialised), so C is overwritten; or, for the later blocks
  // of k (`more`), at C's values, which are the earlier blocks' f32 accumulators stored exactly.
  c.localGet(more).if();
  c.localGet(cp).localSet(row);
  for (let r = 0; r < R; r++) {
    for (let v = 0; v < V; v++)
      c.localGet(row)
        .v128Load(16 * v)
        .localSet(acc[r * V + v]);
    if (r + 1 < R) c.localGet(row).localGet(ldc).i32Add().localSet(row);
  }
  c.end();
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
      if (relaxed) c.localGet(a).localGet(b[v]).localGet(x).f32x4RelaxedMadd().localSet(x);
      else c.localGet(x).localGet(a).localGet(b[v]).f32x4Mul().f32x4Add().localSet(x);
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

function emitBlock(c: Code, micro: Record<string, number>): void {
  const [ap, bp, cp, M, N, K, ldc] = [0, 1, 2, 3, 4, 5, 6];
  const [j, i, a, cc, b, n4, rest, k0, kc] = new Array(9).fill(0).map(() => c.local(I32));
  c.localGet(N).i32Const(3).i32Add().i32Const(-4).i32And().localSet(n4);
  const columnPanel = (W: number) => {
    // A panel of R rows holds 4R bytes per k, a B panel 4W: the block of k from k0 starts that far in.
    c.localGet(ap).localGet(k0).i32Const(4).i32Shl().i32Add().localSet(a);
    c.localGet(cp).localGet(j).i32Const(2).i32Shl().i32Add().localSet(cc);
    c.localGet(bp).localGet(j).localGet(K).i32Mul().i32Const(2).i32Shl().i32Add();
    c.localGet(k0)
      .i32Const(4 * W)
      .i32Mul()
      .i32Add()
      .localSet(b);
    c.i32Const(0).localSet(i);
    const call = (R: number) => {
      if (R < 4) {
        // The last panel has R rows: step back from the 16 bytes per k assumed above to its 4R.
        c.localGet(a)
          .localGet(k0)
          .i32Const(16 - 4 * R)
          .i32Mul()
          .i32Sub()
          .localSet(a);
      }
      c.localGet(a).localGet(b).localGet(cc).localGet(kc).localGet(ldc).localGet(k0);
      c.call(micro[gemmName(R, W)]);
    };
    loopWhile(c, i, M, 4, () => {
      call(4);
      c.localGet(a).localGet(K).i32Const(4).i32Shl().i32Add().localSet(a);
      c.localGet(cc).localGet(ldc).i32Const(2).i32Shl().i32Add().localSet(cc);
    });
    c.localGet(M).localGet(i).i32Sub().localSet(rest);
    for (const R of [1, 2, 3]) {
      c.localGet(rest).i32Const(R).i32Eq().if();
      call(R);
      c.end();
    }
  };
  // Blocks of KC values of k, so a B panel's block (KC·8 floats) stays in L1 while A's panels stream past.
  c.i32Const(0).localSet(k0);
  c.block().loop();
  c.localGet(k0).localGet(K).i32GeS().brIf(1);
  c.localGet(K).localGet(k0).i32Sub().localTee(kc).i32Const(KC).i32GtS().if();
  c.i32Const(KC).localSet(kc);
  c.end();
  c.i32Const(0).localSet(j);
  loopWhile(c, j, N, 8, () => columnPanel(8));
  loopWhile(c, j, n4, 4, () => columnPanel(4));
  c.localGet(k0).i32Const(KC).i32Add().localSet(k0).br(0);
  c.end().end();
}

/** Adds the micro-kernels and `gemm_block` to the module; `relaxed`: their multiply-adds in relaxed SIMD. */
export function addGemm(m: ModuleBuilder, relaxed = false): void {
  const micro: Record<string, number> = {};
  for (const R of GEMM_ROWS)
    for (const W of GEMM_WIDTHS) {
      const name = gemmName(R, W);
      micro[name] = m.func([I32, I32, I32, I32, I32, I32], [], (c) => emitMicro(c, R, W, relaxed), name);
    }
  m.func([I32, I32, I32, I32, I32, I32, I32], [], (c) => emitBlock(c, micro), 'gemm_block');
}
