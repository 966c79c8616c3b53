/**
 * float16 and bfloat16 tensors: the conversions (every bit pattern, round-to-nearest-even, subnormals,
 * overflow, NaN), the tensor API (creation from values and from bits, reads, casts, dtype promotion), and the
 * rule every op follows on a backend that computes in float32: a half op's result is the float32 op on the
 * half inputs' values, rounded once to the half type. Gradients follow the same rule.
 */
import { describe, expect, test } from 'vitest';
import {
  type DType,
  Generator,
  type Tensor,
  createCpuBackend,
  decodeHalf,
  disableWasmKernels,
  enableWasmKernels,
  encodeHalf,
  halfBitsToNumber,
  gather,
  layerNorm,
  logprobs,
  matmul,
  promoteTypes,
  scaledDotProductAttention,
  randn,
  registerBackend,
  scatterAdd,
  softmax,
  tensor,
  tidy,
  toBfloat16Bits,
  toFloat16Bits,
  where,
} from '../src/index.js';

const HALVES = ['float16', 'bfloat16'] as const;
type Half = (typeof HALVES)[number];

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => {
  f32[0] = x;
  return u32[0];
};
const decode = (dtype: Half, bits: number) => decodeHalf(dtype, new Uint16Array([bits]))[0];
const toBits = (dtype: Half, x: number) => (dtype === 'float16' ? toFloat16Bits(x) : toBfloat16Bits(x));

describe('conversions', () => {
  test.each(HALVES)('%s: every bit pattern decodes to a value that encodes back to it', (dtype) => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const values = decodeHalf(dtype, all);
    const again = encodeHalf(dtype, values);
    for (let bits = 0; bits < 65536; bits++) {
      if (Number.isNaN(values[bits])) expect(Number.isNaN(decode(dtype, again[bits]))).toBe(true);
      else if (again[bits] !== bits) throw new Error(`${dtype} bits ${bits} came back as ${again[bits]}`);
    }
  });

  test('float16 decoding agrees with the IEEE formula', () => {
    for (let bits = 0; bits < 65536; bits += 7)
      expect(Object.is(decode('float16', bits), Math.fround(halfBitsToNumber('float16', bits)))).toBe(true);
  });

  test.each(HALVES)('%s rounds to the nearest value, ties to the even pattern', (dtype) => {
    // Random float32 values over the whole finite range of the type, and every midpoint between neighbours.
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed;
    };
    const limit = dtype === 'float16' ? 65504 : 3.38e38;
    for (let n = 0; n < 20000; n++) {
      u32[0] = next() ^ (next() << 16);
      const x = f32[0];
      if (!Number.isFinite(x) || Math.abs(x) > limit) continue;
      const bits = toBits(dtype, x);
      const value = decode(dtype, bits);
      const up = decode(dtype, (bits & 0x7fff) === 0 ? bits ^ 0x8000 : bits + 1);
      const down = decode(dtype, (bits & 0x7fff) === 0 ? bits ^ 0x8000 : bits - 1);
      const err = Math.abs(value - x);
      for (const other of [up, down])
        if (Number.isFinite(other)) {
          const otherErr = Math.abs(other - x);
          if (otherErr < err || (otherErr === err && bits & 1))
            throw new Error(`${dtype}(${x}) gave ${value}, but ${other} is nearer or even`);
        }
    }
  });

  test.each(HALVES)('%s: the copy kernel converts as the scalar functions do', (dtype) => {
    // Every pattern's value, every midpoint between neighbours (the ties), and random float32 bits.
    const values = decodeHalf(
      dtype,
      new Uint16Array(65536).map((_, i) => i),
    );
    const words = new Uint32Array(3 * 65536);
    const floats = new Float32Array(words.buffer);
    floats.set(values);
    for (let i = 0; i < 65535; i++) floats[65536 + i] = (values[i] + values[i + 1]) / 2;
    let seed = 99;
    for (let i = 2 * 65536; i < words.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      words[i] = seed ^ (seed << 13);
    }
    tidy(() => {
      const half = tensor(floats).cast(dtype);
      const bits = encodeHalf(dtype, half.dataSync());
      const want = encodeHalf(dtype, floats);
      for (let i = 0; i < floats.length; i++)
        if (bits[i] !== want[i] && !Number.isNaN(floats[i]))
          throw new Error(`${dtype}: ${floats[i]} copied to bits ${bits[i]}, expected ${want[i]}`);
      const back = half.cast('float32').dataSync();
      expect(Object.is(back[7], values[7])).toBe(true);
      expect(
        [...back.subarray(0, 65536)].map((x, i) => Object.is(x, values[i]) || Number.isNaN(x)),
      ).not.toContain(false);
    });
  });

  test('float16 edge cases', () => {
    expect(toFloat16Bits(65504)).toBe(0x7bff);
    expect(toFloat16Bits(65519.99)).toBe(0x7bff);
    expect(toFloat16Bits(65520)).toBe(0x7c00); // the tie between 65504 and 2^16 goes to the even pattern: ∞
    expect(toFloat16Bits(-1e6)).toBe(0xfc00);
    expect(toFloat16Bits(2 ** -24)).toBe(1); // smallest subnormal
    expect(toFloat16Bits(2 ** -25)).toBe(0); // tie with 0 goes to 0
    expect(toFloat16Bits(3 * 2 ** -25)).toBe(2); // tie between 1 and 2 units goes to 2
    expect(toFloat16Bits(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the normals
    expect(toFloat16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(toFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(toFloat16Bits(-0)).toBe(0x8000);
    expect(Number.isNaN(decode('float16', toFloat16Bits(Number.NaN)))).toBe(true);
  });

  test('bfloat16 edge cases', () => {
    expect(toBfloat16Bits(1)).toBe(0x3f80);
    expect(toBfloat16Bits(1 + 2 ** -8)).toBe(0x3f80); // tie to even
    expect(toBfloat16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(toBfloat16Bits(3.4028234663852886e38)).toBe(0x7f80); // float32's largest rounds to ∞
    expect(toBfloat16Bits(Number.NEGATIVE_INFINITY)).toBe(0xff80);
    expect(toBfloat16Bits(1e-45)).toBe(0x0000); // float32 subnormals round like any other value
    expect(toBfloat16Bits(-0)).toBe(0x8000);
    // A NaN whose payload sits only in the dropped bits stays a NaN.
    u32[0] = 0x7f800001;
    expect(Number.isNaN(decode('bfloat16', toBfloat16Bits(f32[0])))).toBe(true);
    expect(bitsOf(decode('bfloat16', 0x3fc0))).toBe(0x3fc00000);
  });
});

describe('half tensors', () => {
  test.each(HALVES)('%s: values round on the way in and read back as float32', (dtype) => {
    const values = [1, 1 / 3, -2.5e-3, 1000.5, 70000];
    const t = tensor(values, { dtype });
    expect(t.dtype).toBe(dtype);
    const read = t.dataSync();
    expect(read).toBeInstanceOf(Float32Array);
    expect([...read]).toEqual(values.map((x) => decode(dtype, toBits(dtype, x))));
    expect(t.toArraySync()).toEqual([...read]);
    expect(tensor(encodeHalf(dtype, values), { dtype }).dataSync()).toEqual(read); // from bits
    expect(t.cast('float32').cast(dtype).dataSync()).toEqual(read);
    expect(t.cast('int32').toArraySync()).toEqual([...read].map((x) => Math.trunc(x) | 0));
  });

  test.each(HALVES)('%s: rawData reads the stored bits, NaN payloads and views included', async (dtype) => {
    // Two NaNs with payloads (in either type) first.
    const bits = new Uint16Array([0x7fc1, 0xffd5, 0x3c00, 0x8001, 0x7c00, 0x0000]);
    const t = tensor(bits, { dtype, shape: [2, 3] });
    expect(t.rawDataSync()).toEqual(bits);
    expect(await t.rawData()).toEqual(bits);
    expect(t.transpose(0, 1).rawDataSync()).toEqual(
      new Uint16Array([0x7fc1, 0x8001, 0xffd5, 0x7c00, 0x3c00, 0]),
    );
    expect(t.rawDataSync()).not.toBe(t.rawDataSync()); // a copy each time
    expect(Number.isNaN(t.dataSync()[0]) && Number.isNaN(t.dataSync()[1])).toBe(true);
    const f = tensor([1.5, -2]);
    expect(f.rawDataSync()).toEqual(f.dataSync());
  });

  test('a Uint16Array needs a half dtype', () => {
    expect(() => tensor(new Uint16Array([1, 2]))).toThrow(/Uint16Array holds float16 or bfloat16 bits/);
    expect(() => tensor(new Uint16Array([1, 2]), { dtype: 'int32' })).toThrow(/not int32 values/);
  });

  test('dtype promotion', () => {
    expect(promoteTypes('float16', 'bfloat16')).toBe('float32');
    expect(promoteTypes('bfloat16', 'int32')).toBe('bfloat16');
    expect(promoteTypes('float16', 'float32')).toBe('float32');
    expect(promoteTypes('bool', 'float16')).toBe('float16');
    const h = tensor([1.5], { dtype: 'float16' });
    const b = tensor([2.5], { dtype: 'bfloat16' });
    expect(h.add(b).dtype).toBe('float32');
    expect(h.mul(3).dtype).toBe('float16');
    expect(h.add(tensor([1], { dtype: 'int32' })).dtype).toBe('float16');
  });

  test('a backend that cannot store half dtypes refuses them, naming itself', () => {
    const plain = createCpuBackend('cpu-no-half');
    registerBackend('cpu-no-half', { ...plain, halfKernels: undefined });
    expect(() => tensor([1], { dtype: 'bfloat16', device: 'cpu-no-half' })).toThrow(
      /cpu-no-half backend cannot store bfloat16 tensors \(shape \[1\]\)/,
    );
  });
});

/** The float32 computation of `op` on the half inputs' values, rounded to `dtype`'s bits. */
function reference(op: (...xs: Tensor[]) => Tensor, inputs: Tensor[], dtype: DType): Uint16Array {
  return tidy(() => {
    const out = op(...inputs.map((x) => (x.dtype === dtype ? x.cast('float32') : x)));
    return encodeHalf(dtype as Half, out.dataSync());
  });
}

const OPS: [string, (...xs: Tensor[]) => Tensor, (dtype: Half) => Tensor[]][] = [
  ['exp', (x) => x.exp(), (d) => [randn([3, 5], { dtype: d })]],
  ['add with broadcast', (a, b) => a.add(b), (d) => [randn([4, 3], { dtype: d }), randn([3], { dtype: d })]],
  [
    'mul by a strided view',
    (a, b) => a.mul(b.transpose(0, 1)),
    (d) => [randn([3, 4], { dtype: d }), randn([4, 3], { dtype: d })],
  ],
  ['sum', (x) => x.sum(-1), (d) => [randn([4, 50], { dtype: d })]],
  ['max', (x) => x.max(0), (d) => [randn([6, 3], { dtype: d })]],
  ['matmul', (a, b) => matmul(a, b), (d) => [randn([2, 5, 33], { dtype: d }), randn([33, 7], { dtype: d })]],
  ['softmax', (x) => softmax(x, -1), (d) => [randn([3, 9], { dtype: d })]],
  [
    'layer norm',
    (x, w, b) => layerNorm(x, w, b),
    (d) => [randn([5, 8], { dtype: d }), randn([8], { dtype: d }), randn([8], { dtype: d })],
  ],
  [
    'causal attention',
    (q, k, v) => scaledDotProductAttention(q, k, v, { causal: true }),
    (d) => [
      randn([1, 2, 5, 8], { dtype: d }),
      randn([1, 2, 5, 8], { dtype: d }),
      randn([1, 2, 5, 8], { dtype: d }),
    ],
  ],
  ['where', (a, b) => where(a.gt(0), a, b), (d) => [randn([7], { dtype: d }), randn([7], { dtype: d })]],
  [
    'gather',
    (x) =>
      gather(
        x,
        1,
        tensor(
          [
            [2, 0],
            [1, 1],
          ],
          { dtype: 'int32' },
        ),
      ),
    (d) => [randn([2, 3], { dtype: d })],
  ],
  [
    'scatterAdd',
    (x, s) => scatterAdd(x, 0, tensor([0, 2, 0], { dtype: 'int32' }), s),
    (d) => [randn([3], { dtype: d }), randn([3], { dtype: d })],
  ],
];

describe.each([false, true])('half ops compute in float32 and round once (wasm kernels: %s)', (wasm) => {
  test.each(HALVES)('%s', (dtype) => {
    if (wasm) enableWasmKernels({ threads: 1 });
    try {
      for (const [name, op, make] of OPS)
        tidy(() => {
          const inputs = make(dtype);
          const out = op(...inputs);
          expect(out.dtype, name).toBe(dtype);
          const got = encodeHalf(dtype, out.dataSync());
          expect([...got], name).toEqual([...reference(op, inputs, dtype)]);
        });
      // Integer results of half inputs are not rounded: argmax and comparisons.
      tidy(() => {
        const x = tensor([0.5, 3, -1, 3.001], { dtype });
        expect(x.argmax(0).toArraySync()).toBe(dtype === 'float16' ? 3 : 1);
        expect(x.gt(1).toArraySync()).toEqual([false, true, false, true]);
      });
      // Log-probabilities take int32 targets beside half logits.
      tidy(() => {
        const logits = randn([4, 6], { dtype });
        const targets = tensor([0, 5, 2, 2], { dtype: 'int32' });
        const got = encodeHalf(dtype, logprobs(logits, targets).dataSync());
        expect([...got]).toEqual([...reference((l) => logprobs(l, targets), [logits], dtype)]);
      });
    } finally {
      if (wasm) disableWasmKernels();
    }
  });
});

describe('gradients through half tensors', () => {
  test.each(HALVES)('%s: gradients are half, and equal the float32 ones to half precision', (dtype) => {
    tidy(() => {
      const x0 = randn([4, 6]);
      const w0 = randn([6, 3]);
      const loss = (x: Tensor, w: Tensor) => matmul(x, w).tanh().square().sum();
      const x = x0.cast(dtype).detach();
      const w = w0.cast(dtype).detach();
      x.requiresGrad = true;
      w.requiresGrad = true;
      loss(x, w).backward();
      expect(x.grad?.dtype).toBe(dtype);
      const xr = x.cast('float32').detach();
      const wr = w.cast('float32').detach();
      xr.requiresGrad = true;
      wr.requiresGrad = true;
      loss(xr, wr).backward();
      // Every step rounds to the half type, so the gradients agree to a few half ulps.
      const ulp = dtype === 'float16' ? 2 ** -10 : 2 ** -7;
      for (const [g, r] of [
        [x.grad, xr.grad],
        [w.grad, wr.grad],
      ] as [Tensor, Tensor][]) {
        const got = g.dataSync();
        const want = r.dataSync();
        for (let i = 0; i < got.length; i++)
          expect(Math.abs(got[i] - want[i])).toBeLessThan(8 * ulp * (1 + Math.abs(want[i])));
      }
    });
  });

  test('mixed precision: float32 weights, a bfloat16 forward, float32 gradients', () => {
    tidy(() => {
      const w = randn([5, 2], { requiresGrad: true });
      const x = randn([3, 5], { dtype: 'bfloat16' });
      matmul(x, w.cast('bfloat16')).sum().backward();
      expect(w.grad?.dtype).toBe('float32');
      // d(sum(x·w))/dw[i][j] = sum over rows of x[:, i], rounded once to bfloat16 by the matmul.
      const colSums = x.cast('float32').sum(0).dataSync();
      const g = w.grad?.toArraySync() as number[][];
      for (let i = 0; i < 5; i++)
        for (let j = 0; j < 2; j++) expect(g[i][j]).toBe(decode('bfloat16', toBfloat16Bits(colSums[i])));
    });
  });
});

describe('what a fused op saves for its backward', () => {
  // Rounded to bfloat16, the mean of a row of values near 100 moves by up to a quarter: with a gradient
  // that follows the normalised values, every dx moves by as much as dx itself is. So the layer norm's
  // statistics stay float32 for half inputs (so does attention's log-sum-exp: cross-backend/half.ts checks
  // it on the devices, whose backward reads it), as PyTorch keeps them.
  test.each(HALVES)('%s: a layer norm saves its mean and rstd in float32', (dtype) => {
    tidy(() => {
      const x0 = randn([6, 64], { generator: new Generator(1) });
      const noise = randn([6, 64], { generator: new Generator(2) });
      const grad = (x: Tensor) => {
        x.requiresGrad = true;
        // d loss / d y = 3·x0 + noise: mostly along the normalised values.
        layerNorm(x).mul(x0.mul(3).add(noise).cast(x.dtype)).sum().backward();
        return (x.grad as Tensor).cast('float32').dataSync();
      };
      const half = x0.mul(2).add(100).cast(dtype).detach();
      const got = grad(half);
      const want = grad(half.cast('float32').detach());
      const scale = Math.max(...want.map(Math.abs));
      const ulp = dtype === 'float16' ? 2 ** -10 : 2 ** -7;
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(2 * ulp * scale);
    });
  });

  // Rounded to bfloat16, a log-sum-exp between 16 and 32 moves by up to 1/16: e^(1/16) is a 6% error in
  // every probability the backward recomputes from it.
  test.each(HALVES)('%s: logprobs saves its log-sum-exp in float32', (dtype) => {
    tidy(() => {
      const logits0 = randn([16, 40], { generator: new Generator(3) }).mul(6);
      const targets = tensor(
        Array.from({ length: 16 }, (_, i) => (7 * i) % 40),
        { dtype: 'int32' },
      );
      const grad = (logits: Tensor) => {
        logits.requiresGrad = true;
        logprobs(logits, targets).sum().backward();
        return (logits.grad as Tensor).cast('float32').dataSync();
      };
      const half = logits0.cast(dtype).detach();
      const got = grad(half);
      const want = grad(half.cast('float32').detach());
      const ulp = dtype === 'float16' ? 2 ** -10 : 2 ** -7;
      // Each gradient is rounded once to the half type (half an ulp); allow an ulp, plus float32 noise.
      for (let i = 0; i < want.length; i++)
        expect(Math.abs(got[i] - want[i])).toBeLessThan(ulp * Math.abs(want[i]) + 1e-6);
    });
  });
});
