/**
 * The reductions' arithmetic, once for every backend (see ./expr.ts): each value reduction is an identity
 * and a combine of the accumulator a with the next value b; each arg reduction an identity and `better`,
 * whether value b beats the best value a so far. How an arg reduction carries (value, index) pairs — the
 * first index of the best value wins, a NaN is never chosen unless it is the first element, which then
 * nothing beats — is the same for every op and lives in each backend's template, sequential on the CPU
 * and as a pairwise combine on the GPUs.
 *
 * In an int32 (or bool) reduction, an identity of ±Infinity stands for the type's extremes.
 */
import type { ReduceOp } from '../backend/backend.js';
import { type ScalarFunction, add, gt, isnan, lt, mul, or, scalarFunction, select } from './expr.js';

export type ValueReduceOp = 'sum' | 'prod' | 'max' | 'min';
export type ArgReduceOp = 'argmax' | 'argmin';

export interface ValueReduction {
  identity: number;
  /** (a, b) → the accumulator after b. */
  combine: ScalarFunction;
}

export interface ArgReduction {
  identity: number;
  /** (a, b) → bool: b is strictly better than a. */
  better: ScalarFunction;
}

/**
 * b if it beats a or is NaN, else a: NaN propagates (a NaN a is never beaten, since comparisons with NaN are
 * false), and of equal values (−0 and +0) the first stays. The NaN test only runs when the comparison fails.
 */
const extreme = (name: string, beats: typeof gt) =>
  scalarFunction(name, 2, (_, a, b) => select(or(beats(b, a), isnan(b)), b, a));

export const VALUE_REDUCTIONS: Record<ValueReduceOp, ValueReduction> = {
  sum: { identity: 0, combine: scalarFunction('sum', 2, (_, a, b) => add(a, b)) },
  prod: { identity: 1, combine: scalarFunction('prod', 2, (_, a, b) => mul(a, b)) },
  max: { identity: Number.NEGATIVE_INFINITY, combine: extreme('max', gt) },
  min: { identity: Number.POSITIVE_INFINITY, combine: extreme('min', lt) },
};

export const ARG_REDUCTIONS: Record<ArgReduceOp, ArgReduction> = {
  argmax: { identity: Number.NEGATIVE_INFINITY, better: scalarFunction('argmax', 2, (_, a, b) => gt(b, a)) },
  argmin: { identity: Number.POSITIVE_INFINITY, better: scalarFunction('argmin', 2, (_, a, b) => lt(b, a)) },
};

export const isArgReduction = (op: ReduceOp): op is ArgReduceOp => op === 'argmax' || op === 'argmin';
