/**
 * The cuBLAS path's mapping of row-major batched matmuls onto column-major strided-batched GEMMs, checked
 * without a GPU: the plan is executed by the GEMM's definition (cuBLAS's documented column-major
 * semantics, written out below) on the views' own memory and must give the row-major product.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { View } from '../src/backend/backend.js';
import { CUBLAS_OP_N, type GemmPlan, planGemm } from '../src/backend/cuda/gemm-plan.js';
import type { DType } from '../src/dtype.js';
import { contiguousStrides, sizeOf } from '../src/shape.js';

interface Operand {
  view: View;
  memory: Float64Array;
}

/** What cublas{S,D}gemmStridedBatched computes: C[p] = op(A')[p]·op(B')[p], column-major, alpha 1, beta 0. */
function runGemm(plan: GemmPlan, first: Operand, second: Operand, out: Operand): void {
  const at = (o: Operand, op: number, ld: number, stride: number, p: number, i: number, j: number) =>
    o.memory[o.view.offset + p * stride + (op === CUBLAS_OP_N ? i + j * ld : j + i * ld)];
  for (let p = 0; p < plan.batches; p++)
    for (let i = 0; i < plan.m; i++)
      for (let j = 0; j < plan.n; j++) {
        let sum = 0;
        for (let l = 0; l < plan.k; l++)
          sum +=
            at(first, plan.first.op, plan.first.ld, plan.first.batchStride, p, i, l) *
            at(second, plan.second.op, plan.second.ld, plan.second.batchStride, p, l, j);
        out.memory[out.view.offset + p * plan.batchStrideC + i + j * plan.ldc] = sum;
      }
}

/** Element `index` (a multi-index) of a strided view. */
const element = (o: Operand, index: readonly number[]) =>
  o.memory[o.view.offset + index.reduce((s, x, d) => s + x * o.view.strides[d], 0)];

function* indices(shape: readonly number[]): Generator<number[]> {
  const n = sizeOf(shape);
  for (let flat = 0; flat < n; flat++) {
    const idx: number[] = [];
    let r = flat;
    for (let d = shape.length - 1; d >= 0; d--) {
      idx.unshift(r % shape[d]);
      r = Math.floor(r / shape[d]);
    }
    yield idx;
  }
}

type Layout = 'rowMajor' | 'transposed' | 'padded' | 'strided';

/**
 * A rows×cols operand with batch axes `batch` in one of the layouts: row-major, a transposed view of a
 * cols×rows matrix, row-major with rows padded apart (a slice), or neither axis contiguous; `broadcast`
 * repeats one matrix along the batch (stride 0).
 */
function makeOperand(
  batch: readonly number[],
  rows: number,
  cols: number,
  layout: Layout,
  broadcast: boolean,
  values: () => number,
  dtype: DType = 'float32',
): Operand {
  const pad = layout === 'padded' ? 3 : 0;
  let rs: number;
  let cs: number;
  let matrix: number;
  if (layout === 'transposed') [rs, cs, matrix] = [1, rows, rows * cols];
  else if (layout === 'strided') [rs, cs, matrix] = [2 * cols, 2, 2 * rows * cols];
  else [rs, cs, matrix] = [cols + pad, 1, rows * (cols + pad)];
  const batchStrides = broadcast ? batch.map(() => 0) : contiguousStrides(batch).map((s) => s * matrix);
  const count = broadcast ? matrix : sizeOf(batch) * matrix;
  const offset = 2;
  const memory = Float64Array.from({ length: offset + count }, values);
  const view: View = {
    storage: { backend: 'test', dtype, size: memory.length },
    dtype,
    shape: [...batch, rows, cols],
    strides: [...batchStrides, rs, cs],
    offset,
  };
  return { view, memory };
}

const layouts: Layout[] = ['rowMajor', 'transposed', 'padded', 'strided'];

describe('planGemm: row-major matmuls as cuBLAS column-major GEMMs', () => {
  test('the planned GEMM computes A·B for every layout it accepts, and accepts all but strided operands', () => {
    let planned = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...layouts),
        fc.constantFrom(...layouts),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        (batch, M, K, N, layoutA, layoutB, broadcastA, broadcastB, paddedOut, seed) => {
          let state = seed + 1;
          const values = () => {
            state = (state * 48271) % 2147483647;
            return Math.round((state / 2147483647) * 20 - 10);
          };
          const a = makeOperand(batch, M, K, layoutA, broadcastA, values);
          const b = makeOperand(batch, K, N, layoutB, broadcastB, values);
          const out = makeOperand(batch, M, N, paddedOut ? 'padded' : 'rowMajor', false, () => Number.NaN);
          const plan = planGemm(a.view, b.view, out.view);
          const strided = (layout: Layout, rows: number, cols: number) =>
            layout === 'strided' && rows > 1 && cols > 1;
          if (!plan) {
            // Only operands with neither axis contiguous are refused here.
            expect(strided(layoutA, M, K) || strided(layoutB, K, N)).toBe(true);
            return;
          }
          planned++;
          expect([plan.m, plan.n, plan.k, plan.batches]).toEqual([N, M, K, sizeOf(batch)]);
          runGemm(plan, b, a, out);
          for (const idx of indices(out.view.shape)) {
            const [i, j] = idx.slice(-2);
            const head = idx.slice(0, -2);
            let sum = 0;
            for (let l = 0; l < K; l++) sum += element(a, [...head, i, l]) * element(b, [...head, l, j]);
            expect(element(out, idx)).toBe(sum);
          }
        },
      ),
      { numRuns: 400 },
    );
    expect(planned).toBeGreaterThan(200);
  });

  test('leaves to the kernels what cuBLAS cannot take as it is', () => {
    const v = () => 1;
    const ok = (x: Operand, y: Operand, o: Operand) => planGemm(x.view, y.view, o.view) !== undefined;
    const a = makeOperand([2], 3, 4, 'rowMajor', false, v);
    const b = makeOperand([2], 4, 5, 'rowMajor', false, v);
    const out = makeOperand([2], 3, 5, 'rowMajor', false, v);
    expect(ok(a, b, out)).toBe(true);
    // Half types go to cuBLAS too (GemmEx), with the same plan and their own dtype.
    for (const half of ['float16', 'bfloat16'] as const) {
      const [ah, bh, oh] = [a, b, out].map((x) => ({
        ...x,
        view: { ...x.view, dtype: half, storage: { ...x.view.storage, dtype: half } },
      }));
      const plan = planGemm(ah.view, bh.view, oh.view);
      expect(plan).toEqual({ ...planGemm(a.view, b.view, out.view), dtype: half });
      expect(ok(ah, b, oh)).toBe(false); // mixed dtypes are the kernel's (the op layer never sends them)
    }
    // Integers, an output with strided columns, batches written on top of each other, an empty K.
    const ai = makeOperand([2], 3, 4, 'rowMajor', false, v, 'int32');
    const bi = makeOperand([2], 4, 5, 'rowMajor', false, v, 'int32');
    const oi = makeOperand([2], 3, 5, 'rowMajor', false, v, 'int32');
    expect(ok(ai, bi, oi)).toBe(false);
    expect(ok(a, b, makeOperand([2], 3, 5, 'strided', false, v))).toBe(false);
    expect(ok(a, b, makeOperand([2], 3, 5, 'rowMajor', true, v))).toBe(false);
    const a0 = makeOperand([2], 3, 0, 'rowMajor', false, v);
    const b0 = makeOperand([2], 0, 5, 'rowMajor', false, v);
    expect(ok(a0, b0, out)).toBe(false);
    // Two batch axes that do not merge into one stride: A broadcast along the first axis only.
    const a2: Operand = { ...a, view: { ...a.view, shape: [2, 3, 3, 4], strides: [0, 12, 4, 1] } };
    const b2 = makeOperand([2, 3], 4, 5, 'rowMajor', false, v);
    const o2 = makeOperand([2, 3], 3, 5, 'rowMajor', false, v);
    expect(ok(a2, b2, o2)).toBe(false);
  });
});
