/**
 * Edge cases where the library once disagreed with PyTorch: logsumexp over a row of -inf, the gradient of
 * pow at 0^0, and the dtype of a leaf's gradient when its op promotes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DType,
  type Tensor,
  type TensorOrScalar,
  add,
  div,
  logsumexp,
  maximum,
  minimum,
  mul,
  pow,
  sub,
  tensor,
  tidy,
} from '../src/index.js';
import { checkProperty } from './gradient-helpers.js';

/** log(sum(exp(row))) in float64, the row's maximum shifted out; -inf for an empty sum. */
function referenceLogsumexp(row: readonly number[]): number {
  const m = Math.max(...row);
  if (m === Number.NEGATIVE_INFINITY) return m;
  if (m === Number.POSITIVE_INFINITY) return m;
  return m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
}

describe('logsumexp', () => {
  it('is -inf over a row of -inf, and the float64 reference elsewhere', () => {
    const rowArb = fc.oneof(
      fc.integer({ min: 1, max: 5 }).map((n) => new Array<number>(n).fill(Number.NEGATIVE_INFINITY)),
      fc.array(
        fc.oneof(fc.double({ min: -50, max: 50, noNaN: true }), fc.constant(Number.NEGATIVE_INFINITY)),
        {
          minLength: 1,
          maxLength: 5,
        },
      ),
    );
    const caseArb = fc.integer({ min: 1, max: 5 }).chain((cols) =>
      fc.array(
        rowArb.map((r) => [...r, ...new Array<number>(cols).fill(Number.NEGATIVE_INFINITY)].slice(0, cols)),
        { minLength: 1, maxLength: 4 },
      ),
    );
    checkProperty(caseArb, (rows) => {
      const x = tensor(Float64Array.from(rows.flat()), { shape: [rows.length, rows[0].length] });
      expect([...(logsumexp(x, -1).dataSync() as Float64Array)]).toEqual(
        rows.map((r) => expect.closeTo(referenceLogsumexp(r), 12) as unknown as number),
      );
      const all = tensor(new Float32Array(rows[0].length).fill(Number.NEGATIVE_INFINITY));
      expect(logsumexp(all, 0).dataSync()[0]).toBe(Number.NEGATIVE_INFINITY);
    });
  });
});

describe('pow', () => {
  it('d(a^b)/da is 0 where b = 0, 0 included, and b a^(b-1) elsewhere', () => {
    const value = fc.oneof(fc.constant(0), fc.double({ min: 0.25, max: 3, noNaN: true }));
    const exponent = fc.oneof(
      fc.constant(0),
      fc.constant(1),
      fc.constant(2),
      fc.double({ min: 0.5, max: 3, noNaN: true }),
    );
    checkProperty(fc.array(fc.tuple(value, exponent), { minLength: 1, maxLength: 6 }), (pairs) => {
      const a = tensor(
        Float64Array.from(pairs, ([x]) => x),
        { requiresGrad: true },
      );
      const b = tensor(
        Float64Array.from(pairs, ([, y]) => y),
        { requiresGrad: true },
      );
      pow(a, b).sum().backward();
      const expected = pairs.map(([x, y]) => (y === 0 ? 0 : y * x ** (y - 1)));
      expect([...(a.grad!.dataSync() as Float64Array)]).toEqual(
        expected.map((e) => expect.closeTo(e, 12) as unknown as number),
      );
      // d(a^b)/db = a^b log a stays 0 where a = 0.
      const gb = [...(b.grad!.dataSync() as Float64Array)];
      pairs.forEach(([x], i) => {
        if (x === 0) expect(gb[i]).toBe(0);
      });
    });
  });
});

describe("a leaf's gradient has the leaf's dtype", () => {
  const ops: [string, (a: TensorOrScalar, b: TensorOrScalar) => Tensor][] = [
    ['add', add],
    ['sub', sub],
    ['mul', mul],
    ['div', div],
    ['pow', pow],
    ['maximum', maximum],
    ['minimum', minimum],
  ];
  const pairs: [DType, DType][] = [
    ['float32', 'float64'],
    ['bfloat16', 'float32'],
    ['float16', 'float32'],
  ];
  for (const [name, op] of ops)
    for (const [narrow, wide] of pairs)
      it(`${name}: a ${narrow} leaf with a ${wide} operand, on either side`, () => {
        tidy(() => {
          const values = [0.5, 1.25, 2, 0.75];
          const other = [1.5, 0.5, 2, 1];
          for (const leafFirst of [true, false]) {
            const leaf = tensor(values, { dtype: narrow, requiresGrad: true });
            const wideLeaf = tensor(other, { dtype: wide, requiresGrad: true });
            const out = leafFirst ? op(leaf, wideLeaf) : op(wideLeaf, leaf);
            expect(out.dtype).toBe(wide);
            out.sum().backward();
            expect(leaf.grad!.dtype).toBe(narrow);
            expect(wideLeaf.grad!.dtype).toBe(wide);
            // The same gradient as when both are wide, rounded once to the leaf's dtype.
            const leafWide = tensor(leaf.cast(wide).dataSync(), { dtype: wide, requiresGrad: true });
            const other2 = tensor(other, { dtype: wide });
            (leafFirst ? op(leafWide, other2) : op(other2, leafWide)).sum().backward();
            expect([...leaf.grad!.dataSync()]).toEqual([...leafWide.grad!.cast(narrow).dataSync()]);
          }
        });
      });
});
