/**
 * Gather and scatter-add along the last axis on the wasm kernels against the TypeScript kernels: the same
 * bits forward and through autograd (a gather moves a value; a scatter adds in the index's order, and a
 * float32 sum rounds as the TypeScript kernel's double sum rounded to float32), the calls the fast path
 * does not take, and the error for an id out of range, which must neither differ nor write outside the row.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Tensor, gather, getBackend, scatterAdd, tensor, tidy, zeros } from '../src/index.js';
import { disableWasmKernels, wasmSimdSupported } from '../src/backend/wasm/index.js';
import { MIN_ELEMENTWISE } from '../src/backend/wasm/elementwise.js';
import { expectIdentical, f32, leaf, withWasm } from './wasm-helpers.js';

/** An int32 index of `shape` with ids in [0, size), repeats included, from a seed. */
function ids(shape: number[], size: number, seed: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(
    Int32Array.from({ length: n }, (_, i) => (((i + 1) * 2654435761 + seed * 97) % 2 ** 31) % size),
    { shape, dtype: 'int32' },
  );
}

/** Each of `got` bitwise equal to the same entry of `want`. */
function expectAllIdentical(got: Tensor[], want: Tensor[], what: string): void {
  for (const [i, g] of got.entries()) expectIdentical(g, want[i], `${what}: output ${i}`);
}

/** gather's and scatterAdd's outputs, and the gradients of both inputs, with the wasm kernels on or off. */
function run(on: boolean, x: Tensor, index: Tensor, src: Tensor): Tensor[] {
  return withWasm(on, () =>
    tidy(() => {
      const dim = x.rank - 1;
      const [xl, sl] = [leaf(x), leaf(src)];
      const gathered = gather(xl, dim, index);
      const scattered = scatterAdd(xl, dim, index, sl);
      gathered
        .mul(f32(gathered.shape, 7))
        .sum()
        .add(scattered.mul(f32(scattered.shape, 8)).sum())
        .backward();
      return [gathered, scattered, xl.grad as Tensor, sl.grad as Tensor].map((t) => t.detach());
    }),
  );
}

describe.skipIf(!wasmSimdSupported())('wasm gather and scatter-add', () => {
  beforeAll(() => disableWasmKernels());
  afterAll(() => disableWasmKernels());

  test('the same bits as the TypeScript kernels, forward and backward, on random shapes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 1000 }),
        (B, T, size, width, seed) => {
          // Enough rows that most cases take the fast path, and some stay below it.
          const x = f32([B, T, size], seed, 3);
          const index = ids([B, T, width], size, seed);
          const src = f32([B, T, width], seed + 1, 3);
          const [got, want] = [run(true, x, index, src), run(false, x, index, src)];
          expectAllIdentical(got, want, `[${B}, ${T}, ${size}] by ${width}`);
        },
      ),
      { numRuns: 30 },
    );
  });

  test('a call over many rows (several chunks of the row driver) and one row of a view with an offset', () => {
    const x = f32([2000, 37], 1);
    const index = ids([2000, 23], 37, 2);
    const src = f32([2000, 23], 3);
    const [got, want] = [run(true, x, index, src), run(false, x, index, src)];
    expectAllIdentical(got, want, '2,000 rows');
    // A row at an offset in its storage: the last of 3 rows of 5000.
    const wide = f32([3, 5000], 4).narrow(0, 2, 1);
    const at = ids([1, MIN_ELEMENTWISE], 5000, 5);
    const [a, b] = [true, false].map((on) => withWasm(on, () => gather(wide, 1, at)));
    expectIdentical(a, b, 'gather at an offset');
  });

  test('calls the fast path does not take give the TypeScript results: another axis, broadcast index, float64', () => {
    const x = f32([64, 80], 1);
    const cases: [string, () => Tensor][] = [
      ['gather along axis 0', () => gather(x, 0, ids([64, 80], 64, 2))],
      ['index expanded over rows', () => gather(x, 1, ids([1, 100], 80, 3).expand([64, 100]))],
      [
        'scatter into a float64 tensor',
        () =>
          scatterAdd(
            zeros([64, 80], { dtype: 'float64' }),
            1,
            ids([64, 70], 80, 4),
            f32([64, 70], 5).cast('float64'),
          ),
      ],
    ];
    for (const [what, f] of cases)
      expectIdentical(withWasm(true, f).cast('float32'), withWasm(false, f).cast('float32'), what);
  });

  test('an id out of range is the TypeScript error, and a scatter writes nothing outside its rows', () => {
    const rows = 200;
    const size = 50;
    const raw = ids([rows, 40], size, 1).dataSync() as Int32Array;
    // In the first and the last row: unchecked, they would write into the rows around a slice.
    raw[5] = -1;
    raw[(rows - 1) * 40 + 3] = size;
    const index = tensor(raw, { shape: [rows, 40], dtype: 'int32' });
    const x = f32([rows, size], 2);
    for (const on of [true, false]) {
      withWasm(on, () => {
        expect(() => gather(x, 1, index)).toThrow(
          'gather: index -1 is out of range for dimension 1 of size 50',
        );
        // The kernel itself, on a slice of a larger tensor: the rows around it must keep their values.
        const outer = f32([rows + 2, size], 3);
        const before = outer.dataSync().slice();
        const scatter = () =>
          getBackend('cpu').kernels.scatterAdd(outer.narrow(0, 1, rows), 1, index, f32([rows, 40], 4));
        expect(scatter).toThrow('scatterAdd: index -1 is out of range for dimension 1 of size 50');
        const after = outer.dataSync();
        for (const r of [0, rows + 1])
          expect(after.slice(r * size, (r + 1) * size)).toEqual(before.slice(r * size, (r + 1) * size));
      });
    }
  });
});
