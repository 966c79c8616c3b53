/**
 * The kernel IR evaluated by closures, for where a page's content security policy forbids compiling code
 * (./render-js.ts compiles everywhere else): the same operations in the same order as the compiled
 * functions and loops, so the same results, slower.
 */
import type { Expr, Prim, ScalarFunction } from './expr.js';

/**
 * A loop applying f over n elements: argument k read from array x<k> at i<k>, stepping s<k>; results
 * written to o from `at` on. Its signature: (x0, i0, s0, x1, i1, s1, …, o, at, n).
 */
export type RunLoop = (...args: (ArrayLike<number> | number)[]) => void;

/**
 * A loop along a row of `arrays` dense operands: argument k < arrays read from x<k> at i<k> + j, the
 * arguments after them scalars the call passes (a row's statistics), for j < n. A map writes f to o from
 * `at` on: (x0, i0, …, s…, o, at, n); a sum returns Σ f from 0 in order: (x0, i0, …, s…, n).
 */
export type RowLoop = (...args: (ArrayLike<number> | number)[]) => number | undefined;

/** A reduction loop over xs[base + inner[j]], j < m: the accumulated value, or the arg's index. */
export type ReduceLoop = (xs: ArrayLike<number>, base: number, inner: Int32Array, m: number) => number;

type Evaluate = (args: readonly number[], lets: number[]) => number;

const OPS: Record<Prim, (...v: number[]) => number> = {
  neg: (x) => -x,
  abs: Math.abs,
  sign: Math.sign,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  tanh: Math.tanh,
  sin: Math.sin,
  cos: Math.cos,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: (a, b) => a ** b,
  select: (c, a, b) => (c ? a : b),
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
  isnan: (x) => (Number.isNaN(x) ? 1 : 0),
  truthy: (x) => (x ? 1 : 0),
  or: (a, b) => (a || b ? 1 : 0),
};

function closureOf(e: Expr): Evaluate {
  switch (e.kind) {
    case 'arg':
      return (args) => args[e.index];
    case 'let':
      return (_, lets) => lets[e.slot];
    case 'const':
      return () => e.value;
    case 'call': {
      const op = OPS[e.prim];
      const args = e.args.map(closureOf);
      return (a, l) => op(...args.map((g) => g(a, l)));
    }
  }
}

/** The function as closures over the IR (no code compiled at run time). */
export function jsClosure(f: ScalarFunction): (...args: number[]) => number {
  const lets = f.lets.map(closureOf);
  const result = closureOf(f.result);
  return (...args: number[]) => {
    const values: number[] = [];
    for (const g of lets) values.push(g(args, values));
    return result(args, values);
  };
}

/** `jsRun`'s loop around `jsClosure`. */
export function runClosure(f: ScalarFunction): RunLoop {
  const g = jsClosure(f);
  const m = f.arity;
  return (...args) => {
    const arrays = Array.from({ length: m }, (_, a) => args[3 * a] as ArrayLike<number>);
    const starts = Array.from({ length: m }, (_, a) => args[3 * a + 1] as number);
    const steps = Array.from({ length: m }, (_, a) => args[3 * a + 2] as number);
    const [o, at, n] = args.slice(3 * m) as [number[], number, number];
    const values = new Array<number>(m);
    for (let k = 0; k < n; k++) {
      for (let a = 0; a < m; a++) values[a] = arrays[a][starts[a] + k * steps[a]];
      o[at + k] = g(...values);
    }
  };
}

/** `jsReduce`'s loop around `jsClosure`. */
export function reduceClosure(f: ScalarFunction, identity: number): ReduceLoop {
  const combine = jsClosure(f);
  return (xs, base, inner, m) => {
    let acc = identity;
    for (let j = 0; j < m; j++) acc = combine(acc, xs[base + inner[j]]);
    return acc;
  };
}

/** `jsArgReduce`'s loop around `jsClosure`. */
export function argReduceClosure(better: ScalarFunction): ReduceLoop {
  const beats = jsClosure(better);
  return (xs, base, inner, m) => {
    let best = xs[base + inner[0]];
    let at = 0;
    for (let j = 1; j < m; j++) {
      const v = xs[base + inner[j]];
      if (beats(best, v)) {
        best = v;
        at = j;
      }
    }
    return at;
  };
}

/** `jsRowSource`'s loop as closures. */
export function rowClosure(f: ScalarFunction, arrays: number, kind: 'map' | 'sum'): RowLoop {
  const fn = jsClosure(f);
  const scalars = f.arity - arrays;
  return (...p) => {
    const xs = Array.from({ length: arrays }, (_, k) => p[2 * k] as ArrayLike<number>);
    const is = Array.from({ length: arrays }, (_, k) => p[2 * k + 1] as number);
    const ss = p.slice(2 * arrays, 2 * arrays + scalars) as number[];
    const n = p[p.length - 1] as number;
    const args = new Array<number>(f.arity);
    const valueAt = (j: number) => {
      for (let k = 0; k < arrays; k++) args[k] = xs[k][is[k] + j];
      for (let k = 0; k < scalars; k++) args[arrays + k] = ss[k];
      return fn(...args);
    };
    if (kind === 'sum') {
      let acc = 0;
      for (let j = 0; j < n; j++) acc += valueAt(j);
      return acc;
    }
    const o = p[2 * arrays + scalars] as number[];
    const at = p[2 * arrays + scalars + 1] as number;
    for (let j = 0; j < n; j++) o[at + j] = valueAt(j);
    return undefined;
  };
}
