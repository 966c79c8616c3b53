/**
 * Gather and scatter-add along the last axis of dense rows (the copy head's reads of a vocabulary row at
 * a context's token ids, and their gradients):
 *
 * `gather(xp, ip, op, rows, size, width, badp)`: out[r, j] = x[r, index[r, j]] for `rows` rows of x (`size`
 *   floats each) and of the index and out (`width` each). The value is moved as an i32, so its bits are
 *   kept whatever they are (a NaN's payload included), as the TypeScript kernel's copy keeps them.
 * `scatterAdd(dp, ip, sp, rows, size, width, badp)`: dst[r, index[r, j]] += src[r, j], j in order, so that
 *   repeated ids add up in the TypeScript kernel's order (a float32 sum rounds as its double sum rounded
 *   to float32 does: the same bits).
 *
 * An id outside [0, size) is skipped, and 1 is stored at `badp` + 4·(row within the call): the caller
 * reads these flags and throws, as the TypeScript kernel does on the first such id. Skipping keeps a bad
 * index from writing outside its row.
 */
import { type Code, I32, type ModuleBuilder, type ValType } from '../builder.js';
import { loopWhile } from './common.js';

/**
 * The loop nest both kernels share: `element(rowAt, id, j, other)` for each index entry whose id is in
 * range, with locals `rowAt` the row's x (or dst) address, `id` the entry as a byte offset into that row,
 * `j` the entry's byte offset in its index row, and `other` the out (or src) row's address.
 */
function emitRows(c: Code, element: (rowAt: number, id: number, j: number, other: number) => void): void {
  const [xp, ip, op, rows, size, width, badp] = [0, 1, 2, 3, 4, 5, 6];
  const [r, j, id, wb] = [c.local(I32), c.local(I32), c.local(I32), c.local(I32)];
  c.localGet(width).i32Const(2).i32Shl().localSet(wb);
  c.i32Const(0).localSet(r);
  loopWhile(c, r, rows, 1, () => {
    c.i32Const(0).localSet(j);
    loopWhile(c, j, wb, 4, () => {
      c.localGet(ip).localGet(j).i32Add().i32Load().localTee(id);
      c.localGet(size).i32LtU();
      c.if();
      c.localGet(id).i32Const(2).i32Shl().localSet(id);
      element(xp, id, j, op);
      c.else();
      c.localGet(badp).i32Const(1).i32Store();
      c.end();
    });
    c.localGet(xp).localGet(size).i32Const(2).i32Shl().i32Add().localSet(xp);
    c.localGet(ip).localGet(wb).i32Add().localSet(ip);
    c.localGet(op).localGet(wb).i32Add().localSet(op);
    c.localGet(badp).i32Const(4).i32Add().localSet(badp);
  });
}

export function addIndexing(m: ModuleBuilder): void {
  const params: ValType[] = [I32, I32, I32, I32, I32, I32, I32];
  m.func(
    params,
    [],
    (c) =>
      emitRows(c, (xp, id, j, op) => {
        // out[j] = x[id], as bits.
        c.localGet(op).localGet(j).i32Add();
        c.localGet(xp).localGet(id).i32Add().i32Load();
        c.i32Store();
      }),
    'gather',
  );
  m.func(
    params,
    [],
    (c) =>
      emitRows(c, (dp, id, j, sp) => {
        // dst[id] += src[j].
        c.localGet(dp).localGet(id).i32Add();
        c.localGet(dp).localGet(id).i32Add().f32Load();
        c.localGet(sp).localGet(j).i32Add().f32Load();
        c.f32Add().f32Store();
      }),
    'scatterAdd',
  );
}
