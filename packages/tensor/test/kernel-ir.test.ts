/**
 * The kernel IR (src/kernel-ir): the CPU's JavaScript rendering keeps the reference arithmetic of the ops
 * whose formula did not change (to the bit, specials included) and is within a few ulps of the old
 * formulas of those that did; compiled and closure renderings agree to the bit; every renderer renders
 * every op it claims, and refuses what it cannot. Each backend's kernels are checked against the CPU's by
 * the cross-backend suite (WebGPU, the CUDA emulator) and wasm-kernels.test.ts.
 */
import { describe, expect, test } from 'vitest';
import {
  BINARY_OPS,
  type BinaryOp,
  REDUCE_OPS,
  type ReduceOp,
  UNARY_OPS,
  type UnaryOp,
} from '../src/backend/backend.js';
import { getBackend, tensor } from '../src/index.js';
import {
  BINARY_FUNCTIONS,
  INTEGER_UNARY_OPS,
  UNARY_FUNCTIONS,
  WHERE_FUNCTION,
} from '../src/kernel-ir/elementwise.js';
import { abs, add, div, scalarFunction, sub } from '../src/kernel-ir/expr.js';
import { cFunction } from '../src/kernel-ir/render-c.js';
import {
  argReduceClosure,
  jsClosure,
  reduceClosure,
  rowClosure,
  runClosure,
} from '../src/kernel-ir/js-closures.js';
import { ARG_REDUCTIONS, VALUE_REDUCTIONS } from '../src/kernel-ir/reduce.js';
import { jsArgReduce, jsFunction, jsReduce, jsRowLoop, jsRun, jsSource } from '../src/kernel-ir/render-js.js';
import { ROW_FUNCTIONS } from '../src/kernel-ir/rows.js';
import { wasmRenders } from '../src/kernel-ir/render-wasm.js';
import { wgslFunction } from '../src/kernel-ir/render-wgsl.js';

const SPECIALS = [0, -0, 5e-324, -5e-324, 1e-300, 1e300, -1e300, Infinity, -Infinity, Number.NaN];
const grid = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => from + i * step);
const VALUES = [...grid(-30, 30, 0.0137), ...SPECIALS];

const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

/** The CPU backend's unary kernel on float64 values (its dense loop). */
function cpuUnary(op: UnaryOp, values: readonly number[]): Float64Array {
  const x = tensor(Float64Array.from(values), { dtype: 'float64' });
  const out = tensor(new Float64Array(values.length), { dtype: 'float64' });
  getBackend('cpu').kernels.unary(op, x, out);
  return out.dataSync() as Float64Array;
}

/** The CPU backend's binary kernel on every pair of a and b, broadcast [A, 1] × [1, B] (its strided loop). */
function cpuBinary(op: BinaryOp, a: readonly number[], b: readonly number[]): Float64Array {
  const x = tensor(Float64Array.from(a), { dtype: 'float64', shape: [a.length, 1] }).expand([
    a.length,
    b.length,
  ]);
  const y = tensor(Float64Array.from(b), { dtype: 'float64', shape: [1, b.length] }).expand([
    a.length,
    b.length,
  ]);
  const out = tensor(new Float64Array(a.length * b.length), {
    dtype: 'float64',
    shape: [a.length, b.length],
  });
  getBackend('cpu').kernels.binary(op, x, y, out);
  return out.dataSync() as Float64Array;
}

/** The CPU backend's hand-written definitions before the IR, for the ops whose formula the IR kept. */
const KEPT: Partial<Record<string, (...x: number[]) => number>> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign: Math.sign,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  tanh: Math.tanh,
  // biome-ignore lint/complexity/useMathMinMax: Math.max(NaN, 0) is NaN; the reference's relu(NaN) is 0.
  relu: (x) => (x > 0 ? x : 0),
  step: (x) => (x > 0 ? 1 : 0),
  sin: Math.sin,
  cos: Math.cos,
  reciprocal: (x) => 1 / x,
  square: (x) => x * x,
  logical_not: (x) => (x ? 0 : 1),
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: (a, b) => a ** b,
  maximum: (a, b) => (a >= b || Number.isNaN(a) ? a : b),
  minimum: (a, b) => (a <= b || Number.isNaN(a) ? a : b),
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};

/** The old forms of the five the IR writes as x·σ: sign-split sigmoid, GELU through tanh. */
const C = Math.sqrt(2 / Math.PI);
const oldSigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));
const REFORMULATED: Record<string, (x: number) => number> = {
  sigmoid: oldSigmoid,
  silu: (x) => x * oldSigmoid(x),
  silu_grad: (x) => oldSigmoid(x) * (1 + x * (1 - oldSigmoid(x))),
  gelu: (x) => 0.5 * x * (1 + Math.tanh(C * (x + 0.044715 * x * x * x))),
  gelu_grad: (x) => {
    const t = Math.tanh(C * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * C * (1 + 3 * 0.044715 * x * x);
  },
};

/** Ops added with the IR (one entry each; docs/adding-an-op.md). */
const ADDED = ['softplus'];

describe('kernel IR', () => {
  test('the CPU rendering keeps the reference arithmetic of every op whose formula it kept, to the bit', () => {
    const pairs = [-3, -1, -0.5, 0, 0.5, 2, 3.5, ...SPECIALS];
    const differ: string[] = [];
    for (const [op, reference] of Object.entries(KEPT)) {
      if (op in UNARY_FUNCTIONS) {
        const got = cpuUnary(op as UnaryOp, VALUES);
        VALUES.forEach((a, i) => {
          if (!same(got[i], reference!(a))) differ.push(`${op}(${a})`);
        });
      } else {
        const got = cpuBinary(op as BinaryOp, VALUES, pairs);
        for (const [i, a] of VALUES.entries())
          for (const [j, b] of pairs.entries())
            if (!same(got[i * pairs.length + j], reference!(a, b))) differ.push(`${op}(${a}, ${b})`);
      }
    }
    expect(differ).toEqual([]);
    expect(Object.keys(KEPT).length + Object.keys(REFORMULATED).length + ADDED.length).toBe(
      UNARY_OPS.length + BINARY_OPS.length,
    );
  });

  test('sigmoid, SiLU and GELU with their gradients: within 1e-12 (relative) of the old forms, and right where those cancel', () => {
    const xs = grid(-20, 20, 0.0137);
    for (const [op, old] of Object.entries(REFORMULATED)) {
      const got = cpuUnary(op as UnaryOp, [...xs, Number.NaN]);
      xs.forEach((x, i) => {
        const err = Math.abs(got[i] - old(x));
        expect(err, `${op}(${x})`).toBeLessThanOrEqual(1e-12 * Math.abs(old(x)) + 1e-14);
      });
      expect(got[xs.length]).toBeNaN();
    }
    // The limits, without overflow to NaN.
    expect([...cpuUnary('sigmoid', [-800, 800])]).toEqual([0, 1]);
    expect([...cpuUnary('silu', [-800])]).toEqual([-0]);
    expect([...cpuUnary('gelu', [800])]).toEqual([800]);
    // Below x ≈ −7.2, tanh u rounds to −1 and x·(1 + tanh u)/2 to −0; x·σ(2u) keeps GELU's tiny negative value.
    const far = grid(-10, -7.5, 0.25);
    const gelu = cpuUnary('gelu', far);
    far.forEach((x, i) => {
      expect(REFORMULATED.gelu(x), `old gelu(${x})`).toBe(-0);
      expect(gelu[i], `gelu(${x})`).toBeLessThan(0);
    });
  });

  test('the CPU reductions keep their reference answers, NaN, infinities, signed zeros and ties included', () => {
    // The reductions as the CPU backend wrote them before the IR: from the first value, NaN returned at once.
    const reference: Record<ReduceOp, (v: number[]) => number> = {
      sum: (v) => v.reduce((acc, x) => acc + x, 0),
      prod: (v) => v.reduce((acc, x) => acc * x, 1),
      // biome-ignore lint/complexity/useMathMinMax: Math.max(-0, 0) is 0; the reference keeps the first zero.
      max: (v) => v.find((x) => Number.isNaN(x)) ?? v.reduce((best, x) => (x > best ? x : best)),
      // biome-ignore lint/complexity/useMathMinMax: as for max.
      min: (v) => v.find((x) => Number.isNaN(x)) ?? v.reduce((best, x) => (x < best ? x : best)),
      argmax: (v) => v.reduce((at, x, j) => (x > v[at] ? j : at), 0),
      argmin: (v) => v.reduce((at, x, j) => (x < v[at] ? j : at), 0),
    };
    const pool = [0, -0, 1, -1, 2.5, Infinity, -Infinity, Number.NaN, 1e-300, -7];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return pool[seed % pool.length];
    };
    const rows = Array.from({ length: 400 }, (_, r) => Array.from({ length: 1 + (r % 9) }, next));
    const differ: string[] = [];
    for (const op of REDUCE_OPS)
      for (const row of rows) {
        const x = tensor(Float64Array.from(row), { dtype: 'float64', shape: [1, row.length] });
        const out = tensor(new Float64Array(1), { dtype: 'float64' });
        getBackend('cpu').kernels.reduce(op, x.transpose(0, 1), [0], out.reshape([1]));
        const got = out.dataSync()[0];
        if (!same(got, reference[op](row))) differ.push(`${op}([${row}]) = ${got}`);
      }
    expect(differ).toEqual([]);
  });

  test('where (a ternary op): the CPU picks a where the condition holds, over broadcast views', () => {
    const a = [1.5, -0, Number.NaN, -Infinity];
    const b = [7, 0, -2];
    const cond = tensor(Uint8Array.from([1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0]), {
      dtype: 'bool',
      shape: [4, 3],
    });
    const x = tensor(Float64Array.from(a), { dtype: 'float64', shape: [4, 1] }).expand([4, 3]);
    const y = tensor(Float64Array.from(b), { dtype: 'float64', shape: [1, 3] }).expand([4, 3]);
    const out = tensor(new Float64Array(12), { dtype: 'float64', shape: [4, 3] });
    getBackend('cpu').kernels.where(cond, x, y, out);
    const c = cond.dataSync();
    const got = out.dataSync();
    for (let i = 0; i < 12; i++) {
      const want = c[i] ? a[Math.floor(i / 3)] : b[i % 3];
      expect(same(got[i], want), `element ${i}`).toBe(true);
    }
    const compiled = jsFunction(WHERE_FUNCTION);
    const closure = jsClosure(WHERE_FUNCTION);
    for (const [cv, av, bv] of [
      [1, 2, 3],
      [0, 2, 3],
      [Number.NaN, 2, 3],
    ])
      expect(compiled(cv, av, bv)).toBe(closure(cv, av, bv));
  });

  test('softplus: log(1 + eˣ) without overflow, to 1e-15', () => {
    const xs = [...grid(-40, 40, 0.0371), -800, 800, -Infinity, Infinity];
    const got = cpuUnary('softplus', xs);
    xs.forEach((x, i) => {
      const want = x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
      if (got[i] === want) return;
      expect(Math.abs(got[i] - want), `softplus(${x})`).toBeLessThanOrEqual(1e-15 * Math.abs(want) + 1e-15);
    });
    expect(got[xs.length - 2]).toBe(0);
    expect(got[xs.length - 1]).toBe(Infinity);
  });

  test('compiled and closure renderings agree to the bit: functions, loops and reductions', () => {
    const values = VALUES.filter((_, i) => i % 7 === 0 || i >= VALUES.length - SPECIALS.length);
    const seconds = [-2, 0, 0.5, 3, Number.NaN];
    const mismatch = (a: ArrayLike<number>, b: ArrayLike<number>) =>
      Array.from(a).findIndex((v, i) => !same(v, b[i]));
    for (const f of [...Object.values(UNARY_FUNCTIONS), ...Object.values(BINARY_FUNCTIONS)]) {
      const compiled = jsFunction(f);
      const closure = jsClosure(f);
      for (const a of values)
        for (const b of f.arity === 2 ? seconds : [0])
          expect(same(compiled(a, b), closure(a, b)), `${f.name}(${a}, ${b}): ${jsSource(f)}`).toBe(true);
      // The loops over a dense run and a strided one (every other value, from the end backwards).
      const xs = Float64Array.from(values);
      const ys = Float64Array.from(values, (_, i) => seconds[i % seconds.length]);
      const n = xs.length >> 1;
      for (const [start, step] of [
        [0, 1],
        [xs.length - 1, -2],
      ]) {
        const args = f.arity === 1 ? [xs, start, step] : [xs, start, step, ys, start, step];
        const [got, want] = [new Float64Array(n + 1), new Float64Array(n + 1)];
        jsRun(f)(...args, got, 1, n);
        runClosure(f)(...args, want, 1, n);
        expect(mismatch(got, want), `${f.name} loop, step ${step}`).toBe(-1);
      }
    }
    const inner = Int32Array.from({ length: 9 }, (_, j) => 2 * j);
    for (let base = 0; base + 17 < VALUES.length; base += 157) {
      for (const { identity, combine } of Object.values(VALUE_REDUCTIONS))
        expect(
          same(
            jsReduce(combine, identity)(VALUES, base, inner, 9),
            reduceClosure(combine, identity)(VALUES, base, inner, 9),
          ),
          `${combine.name} at ${base}`,
        ).toBe(true);
      for (const { better } of Object.values(ARG_REDUCTIONS))
        expect(jsArgReduce(better)(VALUES, base, inner, 9)).toBe(
          argReduceClosure(better)(VALUES, base, inner, 9),
        );
    }
  });

  test("the row kernels' loops, compiled and as closures, agree with their function element by element", () => {
    const n = 40;
    const offset = 3;
    const column = (k: number) =>
      Float64Array.from({ length: n + offset }, (_, j) => VALUES[(j * 37 + k * 101) % VALUES.length]);
    const same64 = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
    for (const f of ROW_FUNCTIONS)
      for (let arrays = 1; arrays <= Math.min(2, f.arity); arrays++) {
        const xs = Array.from({ length: arrays }, (_, k) => column(k));
        const scalars = Array.from({ length: f.arity - arrays }, (_, k) => [0.75, -1.5, 2, 1e-5, 3][k]);
        const reads = xs.flatMap((x) => [x, offset]);
        const one = jsFunction(f);
        const want = Array.from({ length: n }, (_, j) => one(...xs.map((x) => x[offset + j]), ...scalars));
        for (const loop of [jsRowLoop, rowClosure]) {
          const got = new Float64Array(n + 1);
          loop(f, arrays, 'map')(...reads, ...scalars, got, 1, n);
          expect(
            Array.from(got.subarray(1)).every((v, j) => same64(v, want[j])),
            `${f.name} map`,
          ).toBe(true);
          const sum = loop(f, arrays, 'sum')(...reads, ...scalars, n) as number;
          expect(
            same64(
              sum,
              want.reduce((a, v) => a + v, 0),
            ),
            `${f.name} sum`,
          ).toBe(true);
        }
      }
  });

  test('every renderer renders what it claims and refuses what it cannot', () => {
    for (const f of [...Object.values(UNARY_FUNCTIONS), ...Object.values(BINARY_FUNCTIONS)]) {
      for (const type of ['float32', 'float64'] as const)
        expect(cFunction(f, type, 'f')).toMatch(/^__device__/);
      expect(wgslFunction(f, 'f32', 'f')).toMatch(/^fn f\(a0: f32/);
    }
    const integer = [
      ...INTEGER_UNARY_OPS.map((op) => UNARY_FUNCTIONS[op]),
      ...Object.values(BINARY_FUNCTIONS),
    ];
    for (const f of integer) {
      expect(cFunction(f, 'int32', 'f')).toMatch(/^__device__ __forceinline__ (int|bool) f\(int a0/);
      expect(wgslFunction(f, 'i32', 'f')).toMatch(/^fn f\(a0: i32/);
    }
    // A fraction has no integer form.
    expect(() => cFunction(UNARY_FUNCTIONS.gelu, 'int32', 'f')).toThrow(/0\.044715 in an int/);
    expect(() => wgslFunction(UNARY_FUNCTIONS.sigmoid, 'i32', 'f')).toThrow(/no i32 WGSL form for 'exp'/);
    // The wasm kernels: the ones they compile render; log, tanh, sin, cos, pow and sign do not.
    for (const op of ['exp', 'sigmoid', 'silu', 'silu_grad', 'gelu', 'gelu_grad'] as const)
      expect(wasmRenders(UNARY_FUNCTIONS[op])).toBe(true);
    for (const op of ['add', 'sub', 'mul', 'div', 'maximum', 'lt'] as const)
      expect(wasmRenders(BINARY_FUNCTIONS[op])).toBe(true);
    for (const op of ['log', 'tanh', 'sin', 'cos', 'sign'] as const)
      expect(wasmRenders(UNARY_FUNCTIONS[op])).toBe(false);
    expect(wasmRenders(BINARY_FUNCTIONS.pow)).toBe(false);
  });

  test('a new op is one definition, rendered for every target', () => {
    const softsign = scalarFunction('softsign', 1, (bind, x) => div(x, add(1, bind(abs(x)))));
    const f = jsFunction(softsign);
    for (const x of [-3, -0.5, 0, 2]) expect(f(x)).toBe(x / (1 + Math.abs(x)));
    expect(wgslFunction(softsign, 'f32', 'softsign')).toBe(
      'fn softsign(a0: f32) -> f32 { let t0 = abs(a0); return (a0 / (1.0 + t0)); }',
    );
    expect(cFunction(softsign, 'float32', 'softsign')).toBe(
      '__device__ __forceinline__ float softsign(float a0) { float t0 = fabsf(a0); return (a0 / (1.0f + t0)); }',
    );
    expect(wasmRenders(softsign)).toBe(true);
    expect(jsSource(scalarFunction('d', 2, (_, a, b) => sub(a, b)))).toBe(
      'function d(a0, a1) {  return (a0 - a1); }',
    );
  });
});
