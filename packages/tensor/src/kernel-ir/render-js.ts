/**
 * Renders a scalar function as a JavaScript function on numbers: the CPU backend's reference arithmetic
 * (float64, stored into the output's typed array by the caller). A bool result becomes 1 or 0.
 */
import { type Expr, type Prim, type ScalarFunction, isBool, renderText } from './expr.js';
import {
  type ReduceLoop,
  type RowLoop,
  type RunLoop,
  argReduceClosure,
  jsClosure,
  reduceClosure,
  rowClosure,
  runClosure,
} from './js-closures.js';

export type { ReduceLoop, RowLoop, RunLoop };

const INFIX: Partial<Record<Prim, string>> = {
  add: '+',
  sub: '-',
  mul: '*',
  div: '/',
  pow: '**',
  eq: '===',
  ne: '!==',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
  or: '||',
};

const MATH: Partial<Record<Prim, string>> = {
  abs: 'Math.abs',
  sign: 'Math.sign',
  exp: 'Math.exp',
  log: 'Math.log',
  sqrt: 'Math.sqrt',
  tanh: 'Math.tanh',
  sin: 'Math.sin',
  cos: 'Math.cos',
};

/** A constant as JavaScript source that reads back as the same double. */
const literal = (v: number) =>
  Object.is(v, -0) ? '-0' : Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';

function jsCall(prim: Prim, args: string[]): string {
  const infix = INFIX[prim];
  if (infix) return `(${args[0]} ${infix} ${args[1]})`;
  const math = MATH[prim];
  if (math) return `${math}(${args[0]})`;
  if (prim === 'neg') return `(-${args[0]})`;
  if (prim === 'isnan') return `Number.isNaN(${args[0]})`;
  if (prim === 'truthy') return `(!!${args[0]})`;
  if (prim === 'select') return `(${args[0]} ? ${args[1]} : ${args[2]})`;
  throw new Error(`kernel IR: no JavaScript form for '${prim}'`);
}

export const jsExpression = (e: Expr): string => renderText(e, (v) => `(${literal(v)})`, jsCall);

/** The statements that compute the lets, and the value (1 or 0 for a bool), as source. */
function body(f: ScalarFunction): { lets: string; value: string } {
  const lets = f.lets.map((e, i) => `const t${i} = ${jsExpression(e)};`).join(' ');
  const result = jsExpression(f.result);
  return { lets, value: isBool(f.result, f.lets) ? `(${result} ? 1 : 0)` : result };
}

/** The function's source: `function name(a0, …) { const t0 = …; return …; }`. */
export function jsSource(f: ScalarFunction): string {
  const params = Array.from({ length: f.arity }, (_, i) => `a${i}`).join(', ');
  const { lets, value } = body(f);
  return `function ${f.name}(${params}) { ${lets} return ${value}; }`;
}

/** The loop's source: one loop per op, so each call site sees one function and inlines its arithmetic. */
export function jsRunSource(f: ScalarFunction): string {
  const k = Array.from({ length: f.arity }, (_, i) => i);
  const params = [...k.map((i) => `x${i}, i${i}, s${i}`), 'o', 'at', 'n'].join(', ');
  const steps = k.map((i) => `, i${i} += s${i}`).join('');
  const reads = k.map((i) => `const a${i} = x${i}[i${i}];`).join(' ');
  const dense = k.map((i) => `s${i} === 1`).join(' && ');
  const denseReads = k.map((i) => `const a${i} = x${i}[i${i} + k];`).join(' ');
  const { lets, value } = body(f);
  // Unit steps get a loop of their own, indexed by k alone, which the engine compiles tighter.
  return `function run_${f.name}(${params}) {
  if (${dense}) { for (let k = 0; k < n; k++) { ${denseReads} ${lets} o[at + k] = ${value}; } return; }
  for (let k = 0; k < n; k++${steps}) { ${reads} ${lets} o[at++] = ${value}; }
}`;
}

/** Compiles source in strict mode (a sloppy function would box its `this` at every call); null if forbidden. */
function compiled<T>(source: string): T | null {
  try {
    return new Function(`"use strict"; return ${source}`)() as T;
  } catch (error) {
    if (!(error instanceof EvalError)) throw error;
    return null;
  }
}

/**
 * The function, compiled from its source; where a page's content security policy forbids compiling code,
 * built from closures instead (./js-closures.ts: the same operations in the same order, so the same
 * results, slower). So are the loops below.
 */
export function jsFunction(f: ScalarFunction): (...args: number[]) => number {
  return compiled(jsSource(f)) ?? jsClosure(f);
}

/** The loop of `jsRunSource`, compiled, or `runClosure` where compiling is forbidden. */
export function jsRun(f: ScalarFunction): RunLoop {
  return compiled<RunLoop>(jsRunSource(f)) ?? runClosure(f);
}

/** The loop of a value reduction: the combine of every value, from the identity. */
export function jsReduceSource(f: ScalarFunction, identity: number): string {
  const { lets, value } = body(f);
  return `function reduce_${f.name}(xs, base, inner, m) {
  let acc = ${literal(identity)};
  for (let j = 0; j < m; j++) { const a0 = acc; const a1 = xs[base + inner[j]]; ${lets} acc = ${value}; }
  return acc;
}`;
}

/**
 * The loop of an arg reduction, `better` (a, b) → b beats a: from the first value, each later one that
 * beats the best so far takes its place, so the first of equal values wins and a NaN (never better, and
 * never beaten) is chosen only when it comes first.
 */
export function jsArgReduceSource(better: ScalarFunction): string {
  const { lets, value } = body(better);
  return `function reduce_${better.name}(xs, base, inner, m) {
  let best = xs[base + inner[0]];
  let at = 0;
  for (let j = 1; j < m; j++) { const a0 = best; const a1 = xs[base + inner[j]]; ${lets} if (${value}) { best = a1; at = j; } }
  return at;
}`;
}

/** `jsReduceSource`'s loop, compiled, or `reduceClosure` where compiling is forbidden. */
export function jsReduce(f: ScalarFunction, identity: number): ReduceLoop {
  return compiled<ReduceLoop>(jsReduceSource(f, identity)) ?? reduceClosure(f, identity);
}

/** `jsArgReduceSource`'s loop, compiled, or `argReduceClosure` where compiling is forbidden. */
export function jsArgReduce(better: ScalarFunction): ReduceLoop {
  return compiled<ReduceLoop>(jsArgReduceSource(better)) ?? argReduceClosure(better);
}

/**
 * A row kernel's loop (RowLoop: the first `arrays` arguments read along the row, the rest scalars): a map
 * writing f to o, or a sum of f from 0 in order. Compiled per function, so that the arithmetic is inlined
 * in the loop rather than called through a site that sees several functions.
 */
export function jsRowSource(f: ScalarFunction, arrays: number, kind: 'map' | 'sum'): string {
  const reads = Array.from({ length: arrays }, (_, k) => `const a${k} = x${k}[i${k} + j];`).join(' ');
  const scalars = Array.from({ length: f.arity - arrays }, (_, k) => `a${arrays + k}`);
  const params = [...Array.from({ length: arrays }, (_, k) => `x${k}, i${k}`), ...scalars];
  const { lets, value } = body(f);
  if (kind === 'sum')
    return `function sum_${f.name}(${[...params, 'n'].join(', ')}) {
  let acc = 0;
  for (let j = 0; j < n; j++) { ${reads} ${lets} acc += ${value}; }
  return acc;
}`;
  return `function map_${f.name}(${[...params, 'o', 'at', 'n'].join(', ')}) {
  for (let j = 0; j < n; j++) { ${reads} ${lets} o[at + j] = ${value}; }
}`;
}

/** `jsRowSource`'s loop, compiled, or `rowClosure` where compiling is forbidden. */
export function jsRowLoop(f: ScalarFunction, arrays: number, kind: 'map' | 'sum'): RowLoop {
  return compiled<RowLoop>(jsRowSource(f, arrays, kind)) ?? rowClosure(f, arrays, kind);
}
