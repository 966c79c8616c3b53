/**
 * Casts between dtypes, written once: how the copy kernel turns a value of one dtype into another. The
 * CPU reference is a typed-array store. An int32 gets JavaScript's ToInt32 (truncation, NaN and ±∞ to 0,
 * modulo 2^32), a bool byte the low 8 bits of that (the `cast` op turns bool into "not zero" before the
 * kernel sees it), and float32 the nearest float. Half types go through float32.
 *
 * `castSteps` is that case analysis. Each GPU target writes the steps in its own syntax, calling its own
 * helpers for ToInt32 and the half conversions (`cCast` in render-c.ts, `wgslCast` in render-wgsl.ts).
 */
import { type DType, isFloat, isHalf } from '../dtype.js';

export type HalfDType = 'float16' | 'bfloat16';

export type CastStep =
  /** A half's bits to float32. */
  | { kind: 'fromHalf'; half: HalfDType }
  /** Float32 to a half's bits, rounding to nearest even. */
  | { kind: 'toHalf'; half: HalfDType }
  /** A number (int32, bool, float32, float64) to a float type; floats round to nearest. */
  | { kind: 'toFloat'; fromFloat: boolean; to: 'float32' | 'float64' }
  /** To int32: from a float, ToInt32; from a bool, exact. */
  | { kind: 'toInt32'; fromFloat: boolean }
  /** To a bool byte: the low 8 bits of ToInt32 (of an int32, its low 8 bits). */
  | { kind: 'toByte'; fromFloat: boolean };

/** The steps from `from` to `to`, in order; none when they are the same dtype. */
export function castSteps(from: DType, to: DType): CastStep[] {
  if (from === to) return [];
  if (isHalf(from)) return [{ kind: 'fromHalf', half: from }, ...castSteps('float32', to)];
  if (isHalf(to)) return [...castSteps(from, 'float32'), { kind: 'toHalf', half: to }];
  const fromFloat = isFloat(from);
  if (to === 'float32' || to === 'float64') return [{ kind: 'toFloat', fromFloat, to }];
  return to === 'int32' ? [{ kind: 'toInt32', fromFloat }] : [{ kind: 'toByte', fromFloat }];
}

/** Applies `steps` to the expression `x`, each rendered by `render`. */
export function renderCast(
  x: string,
  steps: readonly CastStep[],
  render: (step: CastStep, x: string) => string,
) {
  return steps.reduce((e, step) => render(step, e), x);
}
