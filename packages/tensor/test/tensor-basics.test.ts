import { describe, expect, test } from 'vitest';
import {
  type Tensor,
  arange,
  concat,
  embedding,
  eye,
  full,
  memory,
  oneHot,
  ones,
  scatterAdd,
  split,
  stack,
  tensor,
  tidy,
  where,
  zeros,
} from '../src/index.js';

const arr = (t: Tensor) => t.toArraySync();

/** Runs fn and checks it created no storage (only view handles). */
function expectNoCopy<T>(fn: () => T): T {
  const before = memory().storages;
  const out = fn();
  expect(memory().storages).toBe(before);
  return out;
}

describe('creation', () => {
  test('nested arrays infer shape and default to float32', () => {
    const t = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(t.shape).toEqual([2, 3]);
    expect(t.strides).toEqual([3, 1]);
    expect(t.dtype).toBe('float32');
    expect(t.device).toBe('cpu');
    expect(t.dataSync()).toBeInstanceOf(Float32Array);
    expect(arr(t)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    const s = tensor(2.5);
    expect(s.shape).toEqual([]);
    expect(s.rank).toBe(0);
    expect(s.itemSync()).toBe(2.5);
    expect(tensor([[[7]]]).shape).toEqual([1, 1, 1]);
    expect(tensor([]).shape).toEqual([0]);
    expect(tensor([1.5, 2], { dtype: 'int32' }).toArraySync()).toEqual([1, 2]);
  });

  test('typed arrays keep their dtype; shape option reshapes', () => {
    expect(tensor(new Float64Array([0.1, 0.2])).dtype).toBe('float64');
    expect(tensor(new Float64Array([0.1, 0.2])).dataSync()[0]).toBe(0.1);
    expect(tensor(new Float32Array([1])).dtype).toBe('float32');
    const i = tensor(new Int32Array([1, -2, 3, 4]), { shape: [2, 2] });
    expect(i.dtype).toBe('int32');
    expect(arr(i)).toEqual([
      [1, -2],
      [3, 4],
    ]);
    const b = tensor(new Uint8Array([1, 0, 1]));
    expect(b.dtype).toBe('bool');
    expect(arr(b)).toEqual([true, false, true]);
    const converted = tensor(new Int32Array([1, 2]), { dtype: 'float64' });
    expect(converted.dtype).toBe('float64');
    expect(converted.dataSync()).toEqual(new Float64Array([1, 2]));
  });

  test('booleans give a bool tensor', () => {
    const b = tensor([
      [true, false],
      [false, true],
    ]);
    expect(b.dtype).toBe('bool');
    expect(b.dataSync()).toEqual(new Uint8Array([1, 0, 0, 1]));
    expect(arr(b)).toEqual([
      [true, false],
      [false, true],
    ]);
    expect(tensor(true).toArraySync()).toBe(true);
  });

  test('bool means "not zero", whatever the source value (stored as 0 or 1)', () => {
    const src = [0.5, 256, -1, 0, 2];
    const fromCast = tensor(src).cast('bool');
    expect(fromCast.dataSync()).toEqual(new Uint8Array([1, 1, 1, 0, 1]));
    expect(arr(fromCast)).toEqual([true, true, true, false, true]);
    expect(fromCast.sum().itemSync()).toBe(4);
    expect(tensor(src, { dtype: 'bool' }).dataSync()).toEqual(new Uint8Array([1, 1, 1, 0, 1]));
    expect(tensor(Float32Array.from(src), { dtype: 'bool' }).dataSync()).toEqual(
      new Uint8Array([1, 1, 1, 0, 1]),
    );
    expect(tensor(Int32Array.from([256, 0, -3]), { dtype: 'bool' }).dataSync()).toEqual(
      new Uint8Array([1, 0, 1]),
    );
    expect(arange(3).cast('bool').dtype).toBe('bool');
  });

  test('zeros / ones / full / arange / eye', () => {
    const z = zeros([2, 3]);
    expect(z.dtype).toBe('float32');
    expect(arr(z)).toEqual([
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(arr(ones([3], { dtype: 'int32' }))).toEqual([1, 1, 1]);
    expect(ones([2], { dtype: 'int32' }).dtype).toBe('int32');
    const f = full([2, 2], 7.5, { dtype: 'float64' });
    expect(f.dtype).toBe('float64');
    expect(arr(f)).toEqual([
      [7.5, 7.5],
      [7.5, 7.5],
    ]);
    expect(zeros([]).shape).toEqual([]);

    const a = arange(5);
    expect(a.dtype).toBe('int32');
    expect(arr(a)).toEqual([0, 1, 2, 3, 4]);
    expect(arr(arange(2, 5))).toEqual([2, 3, 4]);
    expect(arr(arange(5, 0, -2))).toEqual([5, 3, 1]);
    const fr = arange(1, 2, 0.25);
    expect(fr.dtype).toBe('float32');
    expect(arr(fr)).toEqual([1, 1.25, 1.5, 1.75]);
    expect(arr(arange(3, undefined, 1, { dtype: 'float64' }))).toEqual([0, 1, 2]);
    expect(arange(0).shape).toEqual([0]);

    expect(arr(eye(3))).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ]);
    expect(arr(eye(2, 3))).toEqual([
      [1, 0, 0],
      [0, 1, 0],
    ]);
    expect(eye(2, 2, { dtype: 'int32' }).dtype).toBe('int32');
  });

  test('ragged arrays and bad shapes are rejected with the location', () => {
    expect(() => tensor([[1, 2], [3]])).toThrow(
      /tensor: ragged nested array at \[1\]: expected length 2, got length 1/,
    );
    expect(() => tensor([[1, 2], 3] as never)).toThrow(
      /tensor: ragged nested array at \[1\]: expected length 2, got a number/,
    );
    expect(() => tensor([1, [2]] as never)).toThrow(
      /tensor: ragged nested array at \[1\]: expected a number, got an array/,
    );
    expect(() =>
      tensor([
        [
          [1, 2],
          [3, 4],
        ],
        [[5, 6], [7]],
      ]),
    ).toThrow(/ragged nested array at \[1\]\[1\]: expected length 2, got length 1/);
    expect(() => tensor(['a'] as never)).toThrow(/tensor: element at \[0\] is string/);
    expect(() => tensor(new Float32Array(3), { shape: [2, 2] })).toThrow(
      /tensor: shape \[2,2\] holds 4 elements but the data has 3/,
    );
    expect(() => zeros([2, -1])).toThrow(/full: invalid shape \[2, -1\]/);
    expect(() => zeros([1.5])).toThrow(/full: invalid shape \[1.5\]/);
    expect(() => arange(0, 3, 0)).toThrow(/arange: step must not be 0/);
  });
});

describe('dtype promotion', () => {
  test('int32 with float gives float32; int32 with int stays int32', () => {
    const i = tensor(new Int32Array([1, 2]));
    const r = i.add(tensor([0.5, 0.25]));
    expect(r.dtype).toBe('float32');
    expect(arr(r)).toEqual([1.5, 2.25]);
    expect(i.add(0.5).dtype).toBe('float32');
    expect(arr(i.add(0.5))).toEqual([1.5, 2.5]);
    expect(i.add(3).dtype).toBe('int32');
    expect(arr(i.mul(i))).toEqual([1, 4]);
    expect(i.div(tensor(new Int32Array([2, 4]))).dtype).toBe('float32');
    expect(arr(i.div(tensor(new Int32Array([2, 4]))))).toEqual([0.5, 0.5]);
  });

  test('bool * float, float32 + float64, scalars adopt the float dtype', () => {
    const b = tensor([true, false, true]);
    const r = b.mul(tensor([2.5, 2.5, -1]));
    expect(r.dtype).toBe('float32');
    expect(arr(r)).toEqual([2.5, 0, -1]);
    expect(b.add(tensor(new Int32Array([1, 1, 1]))).dtype).toBe('int32');
    expect(arr(b.add(tensor(new Int32Array([1, 1, 1]))))).toEqual([2, 1, 2]);
    const mixed = tensor([1, 2]).add(tensor(new Float64Array([0.1, 0.2])));
    expect(mixed.dtype).toBe('float64');
    const d = tensor(new Float64Array([1, 2]));
    expect(d.mul(0.1).dtype).toBe('float64');
    expect(d.mul(0.1).dataSync()[0]).toBe(0.1);
    // float32 stays float32 next to a JS number (a "weak" scalar)
    expect(tensor([1]).mul(0.1).dtype).toBe('float32');
    expect(tensor([1]).cast('float64').dtype).toBe('float64');
    expect(arr(tensor([1.7, -1.7]).cast('int32'))).toEqual([1, -1]);
    expect(arr(tensor([0, 2]).cast('bool'))).toEqual([false, true]);
  });
});

describe('views share storage and copy nothing', () => {
  test('reshape of a contiguous tensor', () => {
    const x = arange(12);
    const r = expectNoCopy(() => x.reshape([3, 4]));
    expect(r.storage).toBe(x.storage);
    expect(r.shape).toEqual([3, 4]);
    expect(r.strides).toEqual([4, 1]);
    expect(arr(r)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
    ]);
    const inferred = expectNoCopy(() => x.reshape([2, -1, 3]));
    expect(inferred.shape).toEqual([2, 2, 3]);
    expect(expectNoCopy(() => r.flatten()).shape).toEqual([12]);
    expect(expectNoCopy(() => r.unsqueeze(1)).shape).toEqual([3, 1, 4]);
    expect(expectNoCopy(() => r.unsqueeze(1).squeeze()).shape).toEqual([3, 4]);
  });

  test('transpose and permute', () => {
    const x = arange(6).reshape([2, 3]);
    const t = expectNoCopy(() => x.T);
    expect(t.storage).toBe(x.storage);
    expect(t.shape).toEqual([3, 2]);
    expect(t.strides).toEqual([1, 3]);
    expect(t.isContiguous).toBe(false);
    expect(arr(t)).toEqual([
      [0, 3],
      [1, 4],
      [2, 5],
    ]);
    const y = arange(24).reshape([2, 3, 4]);
    const p = expectNoCopy(() => y.permute([2, 0, 1]));
    expect(p.shape).toEqual([4, 2, 3]);
    expect(p.strides).toEqual([1, 12, 4]);
    const pv = arr(p) as number[][][];
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 2; j++) for (let k = 0; k < 3; k++) expect(pv[i][j][k]).toBe(j * 12 + k * 4 + i);
    expect(arr(expectNoCopy(() => y.transpose(0, 2)).select(0, 1))).toEqual([
      [1, 13],
      [5, 17],
      [9, 21],
    ]);
  });

  test('slice with a step, negative bounds, narrow, select, split', () => {
    const x = arange(20).reshape([4, 5]);
    const s = expectNoCopy(() => x.slice(1, 0, 5, 2));
    expect(s.storage).toBe(x.storage);
    expect(s.shape).toEqual([4, 3]);
    expect(s.strides).toEqual([5, 2]);
    expect(arr(s)).toEqual([
      [0, 2, 4],
      [5, 7, 9],
      [10, 12, 14],
      [15, 17, 19],
    ]);
    const s2 = expectNoCopy(() => x.slice(0, 1, 4, 2).slice(1, -2));
    expect(s2.offset).toBe(8);
    expect(arr(s2)).toEqual([
      [8, 9],
      [18, 19],
    ]);
    const n = expectNoCopy(() => x.narrow(1, 1, 2));
    expect(n.offset).toBe(1);
    expect(arr(n)).toEqual([
      [1, 2],
      [6, 7],
      [11, 12],
      [16, 17],
    ]);
    expect(arr(expectNoCopy(() => x.select(0, -1)))).toEqual([15, 16, 17, 18, 19]);
    expect(arr(expectNoCopy(() => x.select(1, 2)))).toEqual([2, 7, 12, 17]);
    expect(expectNoCopy(() => x.slice(1, 4, 2)).shape).toEqual([4, 0]);
    const pieces = expectNoCopy(() => split(x, 3, 1));
    expect(pieces.map((p) => p.shape)).toEqual([
      [4, 3],
      [4, 2],
    ]);
    expect(arr(pieces[1])).toEqual([
      [3, 4],
      [8, 9],
      [13, 14],
      [18, 19],
    ]);
    const uneven = x.split([1, 3]);
    expect(uneven.map((p) => p.shape)).toEqual([
      [1, 5],
      [3, 5],
    ]);
    expect(arr(uneven[1].select(0, 0))).toEqual([5, 6, 7, 8, 9]);
  });

  test('expand gives stride 0 on broadcast axes', () => {
    const col = tensor([[1], [2]]);
    const e = expectNoCopy(() => col.expand([3, 2, 4]));
    expect(e.storage).toBe(col.storage);
    expect(e.strides).toEqual([0, 1, 0]);
    expect(arr(e.select(0, 2))).toEqual([
      [1, 1, 1, 1],
      [2, 2, 2, 2],
    ]);
    expect(expectNoCopy(() => col.expand([-1, 3])).shape).toEqual([2, 3]);
  });

  test('views count as tensors, not storages', () => {
    const x = zeros([4, 4]);
    const before = memory();
    const views = [x.T, x.reshape([16]), x.slice(0, 1), x.expand([2, 4, 4])];
    const after = memory();
    expect(after.tensors).toBe(before.tensors + 4);
    expect(after.storages).toBe(before.storages);
    expect(after.bytes).toBe(before.bytes);
    for (const v of views) v.dispose();
    expect(memory().tensors).toBe(before.tensors);
  });

  test('contiguous() copies a transposed view and keeps a contiguous one', () => {
    const x = arange(6).reshape([2, 3]);
    const t = x.T;
    const before = memory().storages;
    const c = t.contiguous();
    expect(memory().storages).toBe(before + 1);
    expect(c.storage).not.toBe(x.storage);
    expect(c.isContiguous).toBe(true);
    expect(c.strides).toEqual([2, 1]);
    expect(c.offset).toBe(0);
    expect(c.dataSync()).toEqual(new Int32Array([0, 3, 1, 4, 2, 5]));
    const same = expectNoCopy(() => x.contiguous());
    expect(same.storage).toBe(x.storage);
    // reshape of a non-contiguous view has to copy
    const before2 = memory().storages;
    const flat = t.reshape([6]);
    expect(memory().storages).toBe(before2 + 1);
    expect(arr(flat)).toEqual([0, 3, 1, 4, 2, 5]);
    // a sliced view reads back only its own elements
    const sl = arange(10).slice(0, 3, 7);
    expect(sl.dataSync()).toEqual(new Int32Array([3, 4, 5, 6]));
  });
});

describe('broadcasting', () => {
  test('[2,1,3] op [4,1] → [2,4,3], hand-computed', () => {
    const a = tensor([[[1, 2, 3]], [[10, 20, 30]]]);
    const b = tensor([[100], [200], [300], [400]]);
    const sum = a.add(b);
    const diff = a.sub(b);
    const prod = a.mul(b);
    expect(sum.shape).toEqual([2, 4, 3]);
    const s = arr(sum) as number[][][];
    const d = arr(diff) as number[][][];
    const p = arr(prod) as number[][][];
    const av = [
      [1, 2, 3],
      [10, 20, 30],
    ];
    const bv = [100, 200, 300, 400];
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 4; j++)
        for (let k = 0; k < 3; k++) {
          expect(s[i][j][k]).toBe(av[i][k] + bv[j]);
          expect(d[i][j][k]).toBe(av[i][k] - bv[j]);
          expect(p[i][j][k]).toBe(av[i][k] * bv[j]);
        }
  });

  test('row and column vectors, scalars on either side, 0-d tensors', () => {
    const row = tensor([1, 2, 3]);
    const col = tensor([[10], [20]]);
    expect(arr(row.add(col))).toEqual([
      [11, 12, 13],
      [21, 22, 23],
    ]);
    expect(arr(col.div(tensor([2, 4, 5])))).toEqual([
      [5, 2.5, 2],
      [10, 5, 4],
    ]);
    expect(arr(row.pow(2))).toEqual([1, 4, 9]);
    expect(arr(row.maximum(2))).toEqual([2, 2, 3]);
    expect(arr(row.minimum(tensor(2)))).toEqual([1, 2, 2]);
    expect(arr(tensor(5).sub(row))).toEqual([4, 3, 2]);
    expect(tensor(5).add(tensor(1)).shape).toEqual([]);
    // a broadcast view (stride 0) as an operand
    expect(arr(row.expand([2, 3]).mul(col))).toEqual([
      [10, 20, 30],
      [20, 40, 60],
    ]);
    // transposed operand
    const m = arange(6).reshape([2, 3]);
    expect(arr(m.T.add(tensor(new Int32Array([100, 200]))))).toEqual([
      [100, 203],
      [101, 204],
      [102, 205],
    ]);
  });

  test('unary ops on values', () => {
    const x = tensor(new Float64Array([-1, 0, 2]));
    expect(arr(x.neg())).toEqual([1, -0, -2]);
    expect(arr(x.abs())).toEqual([1, 0, 2]);
    expect(arr(x.relu())).toEqual([0, 0, 2]);
    expect(arr(x.square())).toEqual([1, 0, 4]);
    expect(arr(x.exp())).toEqual([Math.exp(-1), 1, Math.exp(2)]);
    expect(arr(x.clamp(-0.5, 1))).toEqual([-0.5, 0, 1]);
    expect(arr(x.sigmoid())).toEqual([1 / (1 + Math.E), 0.5, 1 / (1 + Math.exp(-2))]);
    expect(arr(tensor(new Float64Array([4, 0.25])).sqrt())).toEqual([2, 0.5]);
    expect(arr(tensor(new Float64Array([4, 0.25])).rsqrt())).toEqual([0.5, 2]);
    expect(arr(tensor(new Int32Array([-3])).abs())).toEqual([3]);
    expect(tensor(new Int32Array([-3])).abs().dtype).toBe('int32');
    expect(tensor(new Int32Array([1])).exp().dtype).toBe('float32');
  });
});

describe('reductions', () => {
  const x = () =>
    tensor([
      [1, 5, 3],
      [4, 2, 6],
    ]);

  test('sum over all, one, several axes, with and without keepdim', () => {
    const s = x().sum();
    expect(s.shape).toEqual([]);
    expect(s.itemSync()).toBe(21);
    expect(arr(x().sum(0))).toEqual([5, 7, 9]);
    expect(arr(x().sum(-1))).toEqual([9, 12]);
    expect(arr(x().sum(1, true))).toEqual([[9], [12]]);
    expect(x().sum(1, true).shape).toEqual([2, 1]);
    expect(x().sum([0, 1], true).shape).toEqual([1, 1]);
    expect(arr(x().sum([0, 1], true))).toEqual([[21]]);
    const y = arange(24).reshape([2, 3, 4]);
    const s02 = y.sum([0, 2]);
    expect(s02.shape).toEqual([3]);
    // sum over i, k of (i*12 + j*4 + k) = 4*12 + 2*(4j*4... computed directly:
    const expected = [0, 1, 2].map((j) => {
      let t = 0;
      for (let i = 0; i < 2; i++) for (let k = 0; k < 4; k++) t += i * 12 + j * 4 + k;
      return t;
    });
    expect(arr(s02)).toEqual(expected);
    expect(s02.dtype).toBe('int32');
    expect(y.sum([2, 0], true).shape).toEqual([1, 3, 1]);
    expect(tensor([true, true, false]).sum().dtype).toBe('int32');
    expect(tensor([true, true, false]).sum().itemSync()).toBe(2);
    // reducing a transposed view
    expect(arr(x().T.sum(1))).toEqual([5, 7, 9]);
  });

  test('mean, max, min, argmax, argmin', () => {
    expect(arr(x().mean(1))).toEqual([3, 4]);
    expect(x().mean().itemSync()).toBe(3.5);
    expect(arr(x().mean(0, true))).toEqual([[2.5, 3.5, 4.5]]);
    const im = arange(4).mean();
    expect(im.dtype).toBe('float32');
    expect(im.itemSync()).toBe(1.5);
    expect(arr(x().max(0))).toEqual([4, 5, 6]);
    expect(arr(x().max(1, true))).toEqual([[5], [6]]);
    expect(x().max().itemSync()).toBe(6);
    expect(arr(x().min(1))).toEqual([1, 2]);
    expect(arr(x().min([0, 1], true))).toEqual([[1]]);
    const am = x().argmax(1);
    expect(am.dtype).toBe('int32');
    expect(arr(am)).toEqual([1, 2]);
    expect(arr(x().argmax(0, true))).toEqual([[1, 0, 1]]);
    expect(x().argmax().itemSync()).toBe(5);
    expect(x().argmax().shape).toEqual([]);
    expect(arr(x().argmin(1))).toEqual([0, 1]);
    expect(x().argmin().itemSync()).toBe(0);
    // first index wins on ties
    expect(tensor([3, 7, 7, 1]).argmax().itemSync()).toBe(1);
  });

  test('var: unbiased by default, correction 0, several axes, keepdim', () => {
    const v = x().var(1);
    // row [1,5,3]: mean 3, squares 4+4+0 = 8 → 8/2 = 4; row [4,2,6]: mean 4, 0+4+4 = 8 → 4
    expect(arr(v)).toEqual([4, 4]);
    expect(arr(x().var(1, { correction: 0, keepdim: true }))).toEqual(
      [[8 / 3], [8 / 3]].map((r) => r.map(Math.fround)),
    );
    // all six: mean 3.5, squares 6.25+2.25+0.25+0.25+2.25+6.25 = 17.5 → /5 = 3.5
    expect(x().var().itemSync()).toBe(3.5);
    expect(x().var([0, 1]).itemSync()).toBe(3.5);
    expect(arr(x().var(0))).toEqual([4.5, 4.5, 4.5]);
  });
});

describe('comparisons and where', () => {
  test('comparisons give bool', () => {
    const a = tensor([1, 2, 3]);
    const b = tensor([3, 2, 1]);
    const cases: [Tensor, boolean[]][] = [
      [a.eq(b), [false, true, false]],
      [a.ne(b), [true, false, true]],
      [a.lt(b), [true, false, false]],
      [a.le(b), [true, true, false]],
      [a.gt(b), [false, false, true]],
      [a.ge(b), [false, true, true]],
      [a.gt(1.5), [false, true, true]],
      [tensor(new Int32Array([1, 2, 3])).eq(a), [true, true, true]],
    ];
    for (const [t, expected] of cases) {
      expect(t.dtype).toBe('bool');
      expect(arr(t)).toEqual(expected);
    }
    expect(arr(a.gt(2).logicalNot())).toEqual([true, true, false]);
    const grid = a.reshape([3, 1]).lt(b);
    expect(grid.shape).toEqual([3, 3]);
    expect(arr(grid)).toEqual([
      [true, true, false],
      [true, false, false],
      [false, false, false],
    ]);
  });

  test('where with tensors, scalars and broadcasting', () => {
    const c = tensor([true, false, true]);
    expect(arr(where(c, tensor([1, 2, 3]), tensor([-1, -2, -3])))).toEqual([1, -2, 3]);
    expect(arr(where(c, tensor([1, 2, 3]), 0))).toEqual([1, 0, 3]);
    expect(arr(where(c, 5, tensor([7, 8, 9])))).toEqual([5, 8, 5]);
    const ints = where(c, 1, 0);
    expect(ints.dtype).toBe('int32');
    expect(arr(ints)).toEqual([1, 0, 1]);
    const col = tensor([[true], [false]]);
    expect(arr(where(col, tensor([1, 2]), tensor([[10], [20]])))).toEqual([
      [1, 2],
      [20, 20],
    ]);
    // a non-bool condition means "≠ 0"
    expect(arr(where(tensor([0, 2]), 1, -1))).toEqual([-1, 1]);
  });
});

describe('concat, stack, split', () => {
  test('concat along each dim', () => {
    const a = tensor([
      [1, 2],
      [3, 4],
    ]);
    const b = tensor([[5, 6]]);
    expect(arr(concat([a, b], 0))).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(arr(concat([a, b.T.reshape([2, 1]), a], -1))).toEqual([
      [1, 2, 5, 1, 2],
      [3, 4, 6, 3, 4],
    ]);
    // concat copies: the result owns a new storage and views of the input are read through their strides
    expect(arr(concat([a.T, a], 0))).toEqual([
      [1, 3],
      [2, 4],
      [1, 2],
      [3, 4],
    ]);
  });

  test('stack adds a dim; split round-trips with concat', () => {
    const a = tensor([1, 2, 3]);
    const b = tensor([4, 5, 6]);
    expect(arr(stack([a, b]))).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    const s1 = stack([a, b], 1);
    expect(s1.shape).toEqual([3, 2]);
    expect(arr(s1)).toEqual([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    expect(stack([a, b], -1).shape).toEqual([3, 2]);
    const x = arange(10).reshape([5, 2]);
    const parts = x.split(2);
    expect(parts.map((p) => p.shape[0])).toEqual([2, 2, 1]);
    expect(arr(concat(parts, 0))).toEqual(arr(x));
  });
});

describe('indexing', () => {
  test('gather along each dim', () => {
    const x = tensor([
      [1, 2],
      [3, 4],
    ]);
    const idx = tensor(new Int32Array([0, 0, 1, 0]), { shape: [2, 2] });
    expect(arr(x.gather(1, idx))).toEqual([
      [1, 1],
      [4, 3],
    ]);
    expect(arr(x.gather(0, idx))).toEqual([
      [1, 2],
      [3, 2],
    ]);
    // index smaller than x along the other dim
    const y = arange(12).reshape([3, 4]);
    const g = y.gather(1, tensor(new Int32Array([3, 0, 2]), { shape: [3, 1] }));
    expect(g.shape).toEqual([3, 1]);
    expect(arr(g)).toEqual([[3], [4], [10]]);
    // gather from a transposed view
    // y.T is [[0,4,8],[1,5,9],[2,6,10],[3,7,11]]
    expect(arr(y.T.gather(0, tensor(new Int32Array([2, 0, 3]), { shape: [1, 3] })))).toEqual([[2, 4, 11]]);
  });

  test('indexSelect, embedding, oneHot', () => {
    const w = arange(6).reshape([3, 2]).cast('float32');
    const ids = tensor(new Int32Array([2, 0, 2]));
    expect(arr(w.indexSelect(0, ids))).toEqual([
      [4, 5],
      [0, 1],
      [4, 5],
    ]);
    expect(arr(w.indexSelect(1, tensor(new Int32Array([1, 1, 0]))))).toEqual([
      [1, 1, 0],
      [3, 3, 2],
      [5, 5, 4],
    ]);
    const e = embedding(w, tensor(new Int32Array([1, 0, 2, 1]), { shape: [2, 2] }));
    expect(e.shape).toEqual([2, 2, 2]);
    expect(arr(e)).toEqual([
      [
        [2, 3],
        [0, 1],
      ],
      [
        [4, 5],
        [2, 3],
      ],
    ]);
    const oh = oneHot(tensor(new Int32Array([0, 2, 1])), 3);
    expect(oh.dtype).toBe('int32');
    expect(arr(oh)).toEqual([
      [1, 0, 0],
      [0, 0, 1],
      [0, 1, 0],
    ]);
    const ohf = oneHot(tensor(new Int32Array([1, 0]), { shape: [1, 2] }), 2, 'float64');
    expect(ohf.dtype).toBe('float64');
    expect(arr(ohf)).toEqual([
      [
        [0, 1],
        [1, 0],
      ],
    ]);
  });

  test('scatterAdd accumulates repeated indices and does not modify x', () => {
    const x = zeros([3]);
    const out = scatterAdd(x, 0, tensor(new Int32Array([0, 1, 0, 2])), tensor([1, 2, 3, 4]));
    expect(arr(out)).toEqual([4, 2, 4]);
    expect(arr(x)).toEqual([0, 0, 0]);
    const base = ones([2, 3]);
    const idx = tensor(new Int32Array([1, 0, 1, 0, 0, 0]), { shape: [2, 3] });
    const src = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(arr(scatterAdd(base, 0, idx, src))).toEqual([
      [1 + 4, 1 + 2 + 5, 1 + 6],
      [1 + 1, 1, 1 + 3],
    ]);
    expect(arr(scatterAdd(base, 1, idx, src))).toEqual([
      [1 + 2, 1 + 1 + 3, 1],
      [1 + 4 + 5 + 6, 1, 1],
    ]);
  });
});

describe('reading values', () => {
  test('data(), toArray(), item() and their sync forms', async () => {
    const x = arange(6).reshape([2, 3]).cast('float64');
    const d = await x.data();
    expect(d).toBeInstanceOf(Float64Array);
    expect(Array.from(d)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Array.from(await x.T.data())).toEqual([0, 3, 1, 4, 2, 5]);
    expect(await x.T.toArray()).toEqual([
      [0, 3],
      [1, 4],
      [2, 5],
    ]);
    const narrow = x.select(1, 2);
    expect(Array.from(await narrow.data())).toEqual([2, 5]);
    expect(Array.from(narrow.dataSync())).toEqual([2, 5]);
    expect(await x.sum().item()).toBe(15);
    expect(x.sum().itemSync()).toBe(15);
    expect(await x.select(0, 1).select(0, 1).item()).toBe(4);
    expect(await tensor([[3]]).item()).toBe(3);
    expect(await tensor(new Uint8Array([1]), { shape: [] }).toArray()).toBe(true);
    // data() returns a copy: writing to it does not change the tensor
    d[0] = 99;
    expect(x.dataSync()[0]).toBe(0);
    // reading leaves no temporaries behind
    const xt = x.T;
    const before = memory();
    xt.toArraySync();
    await xt.data();
    expect(memory()).toEqual(before);
    tidy(() => x.T.toArraySync());
    expect(memory()).toEqual(before);
    expect(x.toString()).toBe('Tensor([2, 3], float64, cpu)');
  });
});

describe('bool arithmetic', () => {
  test('adds bools as int32 counts, and full() stores bools as 0/1', () => {
    const t = tensor([true, true, false]);
    const s = t.add(t);
    expect(s.dtype).toBe('int32');
    expect(s.toArraySync()).toEqual([2, 2, 0]);
    expect(full([2], 2, { dtype: 'bool' }).toArraySync()).toEqual([true, true]);
  });
});
