/** The CPU backend's strided walk (backend/cpu/strided.ts): runs cover every element in row-major order. */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { elementOffsets, forEachRun } from '../src/backend/cpu/strided.js';

/** Several views of one shape: any strides (0 for broadcast axes, transposed, sliced), any offsets. */
const views = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 5 }).chain((shape) =>
  fc.record({
    shape: fc.constant(shape),
    layouts: fc.array(
      fc.record({
        strides: fc.tuple(...shape.map(() => fc.integer({ min: 0, max: 40 }))),
        offset: fc.nat({ max: 100 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

test('forEachRun visits each view’s elements in row-major order, as elementOffsets lists them', () => {
  fc.assert(
    fc.property(views, ({ shape, layouts }) => {
      const seen: number[][] = layouts.map(() => []);
      forEachRun(shape, layouts, (starts, n, steps) => {
        starts.forEach((s, k) => {
          for (let i = 0; i < n; i++) seen[k].push(s + i * steps[k]);
        });
      });
      for (const [k, l] of layouts.entries())
        expect(seen[k]).toEqual(Array.from(elementOffsets(shape, l.strides, l.offset)));
    }),
  );
});

test('forEachRun merges axes walked as one: a dense view is one run, a transposed one is not', () => {
  const runs = (shape: number[], strides: number[]) => {
    const lengths: number[] = [];
    forEachRun(shape, [{ strides, offset: 0 }], (_, n) => lengths.push(n));
    return lengths;
  };
  expect(runs([2, 3, 4], [12, 4, 1])).toEqual([24]);
  expect(runs([2, 1, 4], [4, 99, 1])).toEqual([8]);
  expect(runs([3, 2], [1, 3])).toEqual([2, 2, 2]);
  expect(runs([], [])).toEqual([1]);
});
