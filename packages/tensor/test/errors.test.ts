/** Every error names what went wrong: the op, the shapes, the dtype or the device involved. */
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  Generator,
  concat,
  createCpuBackend,
  full,
  getBackend,
  getDefaultDevice,
  initBackend,
  layerNorm,
  logprobs,
  matmul,
  memory,
  randint,
  registerBackend,
  scaledDotProductAttention,
  setDefaultDevice,
  stack,
  tensor,
  tidy,
  zeros,
} from '../src/index.js';

const ints = (values: number[], shape?: number[]) => tensor(Int32Array.from(values), shape ? { shape } : {});

/** Runs fn inside tidy so tensors made before a throw are cleaned up, and checks nothing leaked. */
function expectThrowClean(fn: () => unknown, message: RegExp): void {
  const before = memory();
  expect(() => tidy(fn)).toThrow(message);
  expect(memory()).toEqual(before);
}

describe('shape errors', () => {
  test('broadcasting mismatch names the op and both shapes', () => {
    const a = zeros([2, 3]);
    const b = zeros([4]);
    expectThrowClean(() => a.add(b), /^add: shapes \[2, 3\] and \[4\] cannot be broadcast together$/);
    expectThrowClean(() => a.mul(zeros([3, 3])), /^mul: shapes \[2, 3\] and \[3, 3\] cannot be broadcast/);
    expectThrowClean(() => a.lt(b), /^lt: shapes \[2, 3\] and \[4\] cannot be broadcast/);
  });

  test('matmul misalignment names both shapes and the mismatched dims', () => {
    expectThrowClean(
      () => matmul(zeros([2, 3]), zeros([4, 5])),
      /^matmul: shapes \[2, 3\] and \[4, 5\] are not aligned: 3 \(last dim of a\) != 4 \(second-to-last dim of b\)$/,
    );
    expectThrowClean(
      () => zeros([2, 2, 3]).matmul(zeros([3, 3, 1])),
      /^matmul: shapes \[2\] and \[3\] cannot be broadcast together$/,
    );
    // A batch of rows times a matrix (computed as one flattened product) names the shapes as given.
    expectThrowClean(
      () => matmul(zeros([2, 5, 3]), zeros([4, 6])),
      /^matmul: shapes \[2, 5, 3\] and \[4, 6\] are not aligned: 3 \(last dim of a\) != 4/,
    );
    expectThrowClean(
      () => zeros([3]).matmul(zeros([2])),
      /matmul: shapes \[1, 3\] and \[2, 1\] are not aligned/,
    );
    expectThrowClean(() => matmul(zeros([]), zeros([2])), /matmul: operands must have at least 1 dimension/);
    expectThrowClean(
      () => matmul(tensor([true]), tensor([true])),
      /matmul: bool tensors cannot be multiplied/,
    );
  });

  test('reshape to an incompatible size', () => {
    expectThrowClean(
      () => zeros([2, 3]).reshape([4]),
      /^reshape: cannot reshape a tensor of shape \[2, 3\] \(6 elements\) to \[4\]$/,
    );
    expectThrowClean(
      () => zeros([2, 3]).reshape([4, -1]),
      /reshape: cannot reshape .* \[2, 3\] .* to \[4, -1\]/,
    );
    expectThrowClean(
      () => zeros([6]).reshape([-1, -1]),
      /reshape: only one dimension can be -1, got \[-1, -1\]/,
    );
  });

  test('permute with a bad permutation, bad axes', () => {
    expectThrowClean(
      () => zeros([2, 3]).permute([0, 0]),
      /^permute: dims \[0,0\] are not a permutation of the 2 axes of shape \[2, 3\]$/,
    );
    expectThrowClean(() => zeros([2, 3]).permute([0]), /permute: dims \[0\] are not a permutation/);
    expectThrowClean(
      () => zeros([2, 3]).permute([0, 2]),
      /^permute: axis 2 is out of range for a tensor of rank 2$/,
    );
    expectThrowClean(() => zeros([2, 3]).sum(-3), /^sum: axis -3 is out of range for a tensor of rank 2$/);
    expectThrowClean(() => zeros([2, 3]).transpose(0, 5), /transpose: axis 5 is out of range/);
  });

  test('concat and stack of mismatched shapes or dtypes', () => {
    expectThrowClean(
      () => concat([zeros([2, 3]), zeros([3, 4])], 1),
      /^concat: shapes \[2, 3\] float32, \[3, 4\] float32 differ outside dimension 1$/,
    );
    expectThrowClean(
      () => concat([zeros([2]), zeros([2], { dtype: 'int32' })]),
      /concat: shapes \[2\] float32, \[2\] int32 differ outside dimension 0/,
    );
    expectThrowClean(
      () => concat([zeros([2]), zeros([2, 1])]),
      /concat: shapes \[2\] float32, \[2, 1\] float32/,
    );
    expectThrowClean(() => concat([]), /concat: needs at least one tensor/);
    expectThrowClean(
      () => stack([zeros([2]), zeros([3])]),
      /^stack: all tensors must have one shape, got \[2\], \[3\]$/,
    );
  });

  test('views out of range', () => {
    expectThrowClean(
      () => zeros([2, 3]).expand([3, 3]),
      /^expand: cannot expand shape \[2, 3\] to \[3, 3\]$/,
    );
    expectThrowClean(() => zeros([2, 3]).expand([3]), /expand: cannot expand shape \[2, 3\] to \[3\]/);
    expectThrowClean(
      () => zeros([2, 3]).narrow(1, 2, 2),
      /^narrow: \[2, 4\) is out of range for dimension 1 of shape \[2, 3\]$/,
    );
    expectThrowClean(
      () => zeros([2, 3]).select(0, 2),
      /^select: index 2 is out of range for dimension 0 of shape \[2, 3\]$/,
    );
    expectThrowClean(() => zeros([4]).slice(0, 0, 4, 0), /slice: step must be a positive integer, got 0/);
    expectThrowClean(
      () => zeros([5]).split([2, 2]),
      /^split: sizes \[2,2\] add up to 4, not 5 \(dimension 0 of \[5\]\)$/,
    );
  });
});

describe('disposed tensors', () => {
  test('reading or using a disposed tensor says it was disposed', async () => {
    const t = tensor([1, 2]);
    const v = t.reshape([2, 1]);
    t.dispose();
    expect(t.isDisposed).toBe(true);
    expect(v.toArraySync()).toEqual([[1], [2]]); // the view keeps the storage alive
    const msg = /^tensor of shape \[2\] \(float32\) was disposed and can no longer be used$/;
    expect(() => t.dataSync()).toThrow(msg);
    await expect(t.data()).rejects.toThrow(msg);
    expect(() => t.toArraySync()).toThrow(msg);
    expect(() => t.storage).toThrow(msg);
    expectThrowClean(() => t.add(1), msg);
    expectThrowClean(() => t.reshape([1, 2]), msg);
    expectThrowClean(() => t.T, msg);
    expectThrowClean(() => t.sum(), msg);
    expectThrowClean(() => v.matmul(t.reshape([1, 2])), msg);
    t.dispose(); // disposing twice is a no-op
    v.dispose();
    expect(() => v.dataSync()).toThrow(/tensor of shape \[2, 1\] \(float32\) was disposed/);
  });
});

describe('autograd errors', () => {
  test('backward twice through a freed graph', () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const loss = x.mul(x).sum();
    loss.backward();
    expect(() => loss.backward()).toThrow(
      /^backward: the graph was already freed by an earlier backward\(\); pass \{ retainGraph: true \} to the first call to run backward twice$/,
    );
    // retainGraph keeps it usable
    const loss2 = x.mul(x).sum();
    loss2.backward(undefined, { retainGraph: true });
    expect(() => loss2.backward()).not.toThrow();
    expect(() => loss2.backward()).toThrow(/graph was already freed/);
  });

  test('backward on a non-scalar without a seed, or with a seed of the wrong shape', () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const y = x.mul(2);
    expect(() => y.backward()).toThrow(
      /^backward: tensor of shape \[3\] is not a scalar; pass a seed gradient of the same shape$/,
    );
    expect(() => y.backward(zeros([2]))).toThrow(
      /^backward: seed shape \[2\] does not match tensor shape \[3\]$/,
    );
    expect(() => tensor([1]).backward()).toThrow(/backward: this tensor does not require grad/);
    y.backward(tensor([1, 1, 1]));
    expect(x.grad?.toArraySync()).toEqual([2, 2, 2]);
  });

  test('requiresGrad on an int or bool tensor, or on a non-leaf', () => {
    const i = ints([1, 2]);
    expect(() => {
      i.requiresGrad = true;
    }).toThrow(/^requiresGrad: only floating-point tensors can require grad, not int32$/);
    expect(i.requiresGrad).toBe(false);
    expectThrowClean(
      () => tensor([1, 2], { dtype: 'int32', requiresGrad: true }),
      /requiresGrad: only floating-point tensors can require grad, not int32/,
    );
    expectThrowClean(() => zeros([1], { dtype: 'bool', requiresGrad: true }), /not bool/);
    const y = tensor([1], { requiresGrad: true }).mul(2);
    expect(() => {
      y.requiresGrad = false;
    }).toThrow(/requiresGrad can only be set on a leaf tensor/);
    expect(() => tensor([1, 2]).setGrad(zeros([3]))).toThrow(
      /^setGrad: gradient shape \[3\] does not match tensor shape \[2\]$/,
    );
  });
});

describe('op argument errors', () => {
  test('logprobs: targets of the wrong shape, float targets, out-of-range ids', () => {
    const logits = zeros([2, 3]);
    expectThrowClean(
      () => logprobs(logits, ints([0, 1, 2])),
      /^logprobs: targets shape \[3\] must equal logits shape \[2, 3\] without its last axis$/,
    );
    expectThrowClean(
      () => logprobs(logits, ints([0, 1], [2, 1])),
      /logprobs: targets shape \[2, 1\] must equal logits shape \[2, 3\]/,
    );
    expectThrowClean(
      () => logprobs(logits, tensor([0, 1])),
      /^logprobs: targets must be int32, got float32 of shape \[2\]$/,
    );
    expectThrowClean(
      () => logprobs(logits, ints([0, 3])),
      /^logprobs: target 3 at row 1 is out of range \[0, 3\)$/,
    );
    expectThrowClean(
      () => logprobs(logits, ints([-1, 0])),
      /logprobs: target -1 at row 0 is out of range \[0, 3\)/,
    );
    expectThrowClean(
      () => logprobs(ints([1, 2]), ints([0])),
      /^logprobs: expected a floating-point tensor, got int32 of shape \[2\]$/,
    );
  });

  test('gather / scatterAdd index out of range or of the wrong type', () => {
    const x = zeros([2, 2]);
    expectThrowClean(
      () => x.gather(1, ints([0, 2, 1, 0], [2, 2])),
      /^gather: index 2 is out of range for dimension 1 of size 2$/,
    );
    expectThrowClean(
      () => x.gather(0, ints([-1, 0], [1, 2])),
      /gather: index -1 is out of range for dimension 0/,
    );
    expectThrowClean(
      () => x.gather(1, tensor([[0], [1]])),
      /^gather: index must be int32, got float32 of shape \[2, 1\]$/,
    );
    expectThrowClean(
      () => x.gather(1, ints([0, 0, 0], [3, 1])),
      /^gather: index of shape \[3, 1\] does not fit input of shape \[2, 2\] along dim 1$/,
    );
    expectThrowClean(
      () => x.indexSelect(0, ints([0, 5])),
      /gather: index 5 is out of range for dimension 0 of size 2/,
    );
    expectThrowClean(
      () => x.indexSelect(0, ints([0], [1, 1])),
      /indexSelect: index must be 1-d, got shape \[1, 1\]/,
    );
  });

  test('other argument checks', () => {
    expectThrowClean(() => randint(3, 3, [2]), /^randint: need integers low < high, got \[3, 3\)$/);
    expect(() => new Generator(-1)).toThrow(/^Generator: seed must be a non-negative integer, got -1$/);
    expect(() => new Generator(1.5)).toThrow(/seed must be a non-negative integer, got 1.5/);
    expectThrowClean(
      () => zeros([2, 3]).itemSync(),
      /^item: tensor of shape \[2, 3\] has 6 elements, not 1$/,
    );
    expectThrowClean(
      () => layerNorm(zeros([2, 4]), zeros([3])),
      /^layerNorm: weight must be \[4\] float32 to match input \[2, 4\], got \[3\] float32$/,
    );
  });

  test('attention checks shapes and mask dtype', () => {
    expectThrowClean(
      () => scaledDotProductAttention(zeros([1, 3, 2, 4]), zeros([1, 2, 2, 4]), zeros([1, 2, 2, 4])),
      /^attention: expected q \[B, H, T, D\] and k, v \[B, Hkv, S, D\] of one dtype with H a multiple of Hkv; got q \[1, 3, 2, 4\], k \[1, 2, 2, 4\], v \[1, 2, 2, 4\]$/,
    );
    expectThrowClean(
      () =>
        scaledDotProductAttention(zeros([1, 1, 2, 4]), zeros([1, 1, 2, 4]), zeros([1, 1, 2, 4]), {
          mask: zeros([2, 2]),
        }),
      /^attention: mask must be bool \(true = attend\), got float32$/,
    );
  });
});

describe('tidy', () => {
  test('tidy with an async function is refused and its tensors are disposed', () => {
    const before = memory();
    expect(() =>
      tidy(async () => {
        zeros([3]);
        return 1;
      }),
    ).toThrow(/^tidy: fn returned a Promise; tidy only scopes synchronous code/);
    expect(memory()).toEqual(before);
  });

  test('an error inside tidy disposes the tensors made so far and propagates unchanged', () => {
    const before = memory();
    const boom = new Error('boom');
    expect(() =>
      tidy(() => {
        zeros([3]).add(1);
        throw boom;
      }),
    ).toThrow(boom);
    expect(memory()).toEqual(before);
  });
});

describe('devices', () => {
  beforeAll(() => {
    registerBackend('cpu2', createCpuBackend('cpu2'));
  });
  afterEach(() => setDefaultDevice('cpu'));

  test('unknown device', () => {
    expect(() => tensor([1], { device: 'tpu' })).toThrow(/^unknown device 'tpu' \(known: cpu, cpu2.*\)$/);
    expect(() => zeros([1], { device: 'tpu' })).toThrow(/unknown device 'tpu'/);
    expect(() => setDefaultDevice('tpu')).toThrow(/unknown device 'tpu'/);
    expect(getDefaultDevice()).toBe('cpu');
    expectThrowClean(() => tensor([1]).to('tpu'), /unknown device 'tpu'/);
    expect(() => getBackend('gpu0')).toThrow(/unknown device 'gpu0'/);
  });

  test('a backend registered as a factory must be initialised first', async () => {
    registerBackend('lazy', () => createCpuBackend('lazy'));
    expect(() => tensor([1], { device: 'lazy' })).toThrow(
      /^backend 'lazy' is not initialised yet: await initBackend\('lazy'\) first$/,
    );
    await initBackend('lazy');
    const t = tensor([1, 2], { device: 'lazy' });
    expect(t.device).toBe('lazy');
    expect(t.add(1).toArraySync()).toEqual([2, 3]);
    t.dispose();
    await expect(initBackend('nope')).rejects.toThrow(/^initBackend: no backend named 'nope' is registered/);
  });

  test('tensors on different devices are refused, naming both devices', () => {
    const a = tensor([1, 2], { device: 'cpu2' });
    const b = tensor([3, 4]);
    expect(a.device).toBe('cpu2');
    expect(a.storage.backend).toBe('cpu2');
    const msg = (op: string) =>
      new RegExp(`^${op}: tensors are on different devices \\(cpu2 and cpu\\); move one with \\.to\\(\\)$`);
    expectThrowClean(() => a.add(b), msg('add'));
    expectThrowClean(() => a.lt(b), msg('lt'));
    expectThrowClean(() => a.reshape([1, 2]).matmul(b.reshape([2, 1])), msg('matmul'));
    expectThrowClean(() => concat([a, b]), msg('concat'));
    expectThrowClean(() => a.gather(0, ints([0])), msg('gather'));
    expectThrowClean(() => b.add(a), /^add: tensors are on different devices \(cpu and cpu2\)/);
    // .to() moves it, and memory is counted per backend
    const before = memory().backends.cpu2?.storages ?? 0;
    const moved = b.to('cpu2');
    expect(memory().backends.cpu2.storages).toBe(before + 1);
    expect(a.add(moved).toArraySync()).toEqual([4, 6]);
    expect(a.add(moved).device).toBe('cpu2');
    expect(a.to('cpu2')).toBe(a);
    setDefaultDevice('cpu2');
    expect(zeros([1]).device).toBe('cpu2');
    expect(full([1], 2).add(a).toArraySync()).toEqual([3, 4]);
  });

  test('dataSync on a backend that cannot read synchronously', async () => {
    const { readSync: _, ...rest } = createCpuBackend('async-only');
    registerBackend('async-only', rest);
    const t = tensor([1, 2], { device: 'async-only' });
    expect(() => t.dataSync()).toThrow(
      /^dataSync: the async-only backend cannot read synchronously; use await tensor\.data\(\)$/,
    );
    expect(() => t.rawDataSync()).toThrow(
      /^rawDataSync: the async-only backend cannot read synchronously; use await tensor\.rawData\(\)$/,
    );
    expect(Array.from(await t.data())).toEqual([1, 2]);
    expect(Array.from(await t.rawData())).toEqual([1, 2]);
    expect(await t.sum().item()).toBe(3);
  });
});
