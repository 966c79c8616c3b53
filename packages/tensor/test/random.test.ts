/** Threefry-2x32 against the Random123 known-answer vectors, and the distributions built on it. */
import { describe, expect, test } from 'vitest';
import {
  Generator,
  getDefaultGenerator,
  manualSeed,
  normal,
  rand,
  randint,
  randn,
  threefry2x32,
  uniform,
} from '../src/index.js';
import { wordToUnit } from '../src/random.js';

describe('threefry2x32', () => {
  // Random123 kat_vectors, threefry2x32_20 (key, counter → output); the same vectors JAX tests against.
  test.each([
    [
      [0, 0],
      [0, 0],
      [0x6b200159, 0x99ba4efe],
    ],
    [
      [0xffffffff, 0xffffffff],
      [0xffffffff, 0xffffffff],
      [0x1cb996fc, 0xbb002be7],
    ],
    [
      [0x13198a2e, 0x03707344],
      [0x243f6a88, 0x85a308d3],
      [0xc4923a9c, 0x483df7a0],
    ],
  ])('key %j counter %j', (key, counter, expected) => {
    expect(threefry2x32(key[0], key[1], counter[0], counter[1])).toEqual(expected);
  });

  test('outputs are unsigned 32-bit words and depend on every input word', () => {
    const base = threefry2x32(1, 2, 3, 4);
    for (const w of base) {
      expect(Number.isInteger(w)).toBe(true);
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThan(2 ** 32);
    }
    const variants = [
      threefry2x32(0, 2, 3, 4),
      threefry2x32(1, 3, 3, 4),
      threefry2x32(1, 2, 2, 4),
      threefry2x32(1, 2, 3, 5),
    ];
    for (const v of variants) {
      expect(v[0]).not.toBe(base[0]);
      expect(v[1]).not.toBe(base[1]);
    }
  });
});

/** What element i of a uniform(0, 1) draw must be: the first word of threefry(key, counter + i), mapped to (0, 1). */
function expectedUnit(key: readonly [number, number], counter: number): number {
  const [w0] = threefry2x32(key[0], key[1], counter % 2 ** 32, Math.floor(counter / 2 ** 32));
  return wordToUnit(w0);
}

describe('wordToUnit', () => {
  test('maps every word into (0, 1), exactly representable in float32', () => {
    const words = [0, 1, 0x1ff, 0x200, 0x7fffffff, 0x80000000, 0xfffffdff, 0xfffffe00, 0xffffffff];
    for (const w of words) {
      const u = wordToUnit(w);
      expect(u).toBeGreaterThan(0);
      expect(u).toBeLessThan(1);
      expect(Math.fround(u)).toBe(u);
    }
    // the largest word must not round to 1 in a float32 tensor
    expect(Math.fround(wordToUnit(0xffffffff))).toBeLessThan(1);
    expect(wordToUnit(0x80000000)).toBeGreaterThan(0.5);
    expect(wordToUnit(0x7fffffff)).toBeLessThan(0.5);
  });
});

describe('Generator', () => {
  test('the seed is the key; element i uses counter + i', () => {
    const g = new Generator(5);
    expect(g.key).toEqual([5, 0]);
    expect(new Generator(2 ** 32 + 7).key).toEqual([7, 1]);
    expect(g.state).toEqual({ key: [5, 0], counter: 0 });
    const a = rand([4], { generator: g, dtype: 'float64' });
    expect(g.state.counter).toBe(4);
    expect(Array.from(a.dataSync())).toEqual([0, 1, 2, 3].map((i) => expectedUnit([5, 0], i)));
    const b = rand([3], { generator: g, dtype: 'float64' });
    expect(g.state.counter).toBe(7);
    expect(Array.from(b.dataSync())).toEqual([4, 5, 6].map((i) => expectedUnit([5, 0], i)));
  });

  test('same seed → same numbers; different seeds differ', () => {
    const draw = (seed: number) => Array.from(rand([64], { generator: new Generator(seed) }).dataSync());
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    const a = draw(0);
    const b = draw(1);
    expect(a.filter((x, i) => x === b[i]).length).toBeLessThan(3);
    const ints = (seed: number) =>
      Array.from(randint(0, 1000, [32], { generator: new Generator(seed) }).dataSync());
    expect(ints(9)).toEqual(ints(9));
    expect(ints(9)).not.toEqual(ints(10));
  });

  test('draws advance the counter, so consecutive draws differ and split a single draw', () => {
    const g = new Generator(3);
    const first = Array.from(randn([5], { generator: g, dtype: 'float64' }).dataSync());
    const second = Array.from(randn([5], { generator: g, dtype: 'float64' }).dataSync());
    expect(first).not.toEqual(second);
    expect(g.state.counter).toBe(10);
    const whole = Array.from(randn([10], { generator: new Generator(3), dtype: 'float64' }).dataSync());
    expect(whole).toEqual([...first, ...second]);
    // every distribution consumes one counter per element
    randint(0, 5, [2, 3], { generator: g });
    uniform([7], -1, 1, { generator: g });
    expect(g.state.counter).toBe(10 + 6 + 7);
    // position can be restored (checkpoints)
    g.position = 5;
    expect(Array.from(randn([5], { generator: g, dtype: 'float64' }).dataSync())).toEqual(second);
  });

  test('manualSeed resets the default generator', () => {
    manualSeed(11);
    const a = Array.from(rand([16]).dataSync());
    expect(getDefaultGenerator().state.counter).toBe(16);
    const b = Array.from(rand([16]).dataSync());
    expect(a).not.toEqual(b);
    const g = manualSeed(11);
    expect(getDefaultGenerator()).toBe(g);
    expect(Array.from(rand([16]).dataSync())).toEqual(a);
    expect(Array.from(rand([16], { generator: new Generator(11) }).dataSync())).toEqual(a);
  });
});

function stats(values: ArrayLike<number>): { mean: number; std: number; min: number; max: number } {
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    sum += values[i];
    min = Math.min(min, values[i]);
    max = Math.max(max, values[i]);
  }
  const mean = sum / values.length;
  let sq = 0;
  for (let i = 0; i < values.length; i++) sq += (values[i] - mean) ** 2;
  return { mean, std: Math.sqrt(sq / (values.length - 1)), min, max };
}

describe('distributions (10^5 draws)', () => {
  const N = 100_000;

  test('uniform: in (0, 1), mean ≈ 0.5, std ≈ 1/√12, even deciles', () => {
    const u = rand([N], { generator: new Generator(2024) });
    expect(u.dtype).toBe('float32');
    const v = u.dataSync();
    const s = stats(v);
    expect(s.min).toBeGreaterThan(0);
    expect(s.max).toBeLessThan(1);
    // standard error of the mean is 0.289 / √N ≈ 0.0009
    expect(Math.abs(s.mean - 0.5)).toBeLessThan(0.005);
    expect(Math.abs(s.std - 1 / Math.sqrt(12))).toBeLessThan(0.005);
    const bins = new Array(10).fill(0);
    for (const x of v) bins[Math.floor(x * 10)]++;
    for (const c of bins) expect(Math.abs(c - N / 10)).toBeLessThan(600); // σ ≈ 95
  });

  test('uniform(low, high) stays in [low, high)', () => {
    const v = uniform([N], -3, 5, { generator: new Generator(8), dtype: 'float64' }).dataSync();
    const s = stats(v);
    expect(s.min).toBeGreaterThanOrEqual(-3);
    expect(s.max).toBeLessThan(5);
    expect(Math.abs(s.mean - 1)).toBeLessThan(0.04);
    expect(s.min).toBeLessThan(-2.99);
    expect(s.max).toBeGreaterThan(4.99);
  });

  test('randn: mean ≈ 0, std ≈ 1, symmetric tails; normal(mean, std) scales it', () => {
    const v = randn([N], { generator: new Generator(77), dtype: 'float64' }).dataSync();
    const s = stats(v);
    // standard errors: mean 0.0032, std 0.0022
    expect(Math.abs(s.mean)).toBeLessThan(0.015);
    expect(Math.abs(s.std - 1)).toBeLessThan(0.015);
    let beyond2 = 0;
    let positive = 0;
    for (const x of v) {
      if (Math.abs(x) > 2) beyond2++;
      if (x > 0) positive++;
    }
    expect(Math.abs(beyond2 / N - 0.0455)).toBeLessThan(0.004);
    expect(Math.abs(positive / N - 0.5)).toBeLessThan(0.006);
    const n = normal([N], 10, 3, { generator: new Generator(77), dtype: 'float64' }).dataSync();
    for (let i = 0; i < 100; i++) expect(n[i]).toBeCloseTo(10 + 3 * v[i], 12);
  });

  test('randint: in [low, high), int32, covering every value about equally', () => {
    const t = randint(-3, 4, [N], { generator: new Generator(5) });
    expect(t.dtype).toBe('int32');
    const v = t.dataSync();
    const counts = new Map<number, number>();
    for (const x of v) counts.set(x, (counts.get(x) ?? 0) + 1);
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([-3, -2, -1, 0, 1, 2, 3]);
    for (const c of counts.values()) expect(Math.abs(c - N / 7)).toBeLessThan(700); // σ ≈ 110
    const small = randint(0, 2, [1000], { generator: new Generator(6) }).dataSync();
    expect(new Set(small)).toEqual(new Set([0, 1]));
    const big = randint(0, 2 ** 31 - 1, [1000], { generator: new Generator(6) }).dataSync();
    expect(Math.min(...big)).toBeGreaterThanOrEqual(0);
    expect(stats(big).mean / 2 ** 30).toBeGreaterThan(0.9);
    expect(stats(big).mean / 2 ** 30).toBeLessThan(1.1);
  });

  test('float dtypes only for continuous draws', () => {
    expect(() => rand([2], { dtype: 'int32' })).toThrow(
      /^uniform: dtype must be float32, float64, float16 or bfloat16, got int32$/,
    );
    expect(() => randn([2], { dtype: 'bool' })).toThrow(
      /^normal: dtype must be float32, float64, float16 or bfloat16, got bool$/,
    );
  });
});
