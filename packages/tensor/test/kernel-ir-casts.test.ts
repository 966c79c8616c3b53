/**
 * The kernel IR's casts (src/kernel-ir/casts.ts): for every pair of dtypes, the steps, written in
 * JavaScript, convert each value exactly as the CPU's copy kernel (a typed-array store) does, specials
 * and out-of-range values included. Each step's JavaScript gives a value the destination holds as it is, so
 * the store does no conversion the steps left out. The WGSL and CUDA renderings of the same steps are run by
 * the WebGPU and CUDA emulator suites.
 */
import { describe, expect, test } from 'vitest';
import { getBackend, tensor } from '../src/index.js';
import { type DType, isHalf, typedArrayFor } from '../src/dtype.js';
import { halfBitsToNumber, toHalfBits } from '../src/half.js';
import { type CastStep, castSteps, renderCast } from '../src/kernel-ir/casts.js';

const DTYPES: DType[] = ['float32', 'float64', 'float16', 'bfloat16', 'int32', 'bool'];

/** A step in JavaScript: the helpers are half.ts's conversions. */
function jsCast(step: CastStep, x: string): string {
  switch (step.kind) {
    case 'fromHalf':
      return `halfBitsToNumber('${step.half}', ${x})`;
    case 'toHalf':
      return `toHalfBits('${step.half}', ${x})`;
    case 'toFloat':
      return step.to === 'float32' ? `Math.fround(${x})` : x;
    case 'toInt32':
      return `(${x} | 0)`;
    case 'toByte':
      return `(${x} & 255)`;
  }
}

const compiled = (from: DType, to: DType) =>
  new Function(
    'halfBitsToNumber',
    'toHalfBits',
    `return (x) => ${renderCast('x', castSteps(from, to), jsCast)};`,
  )(halfBitsToNumber, toHalfBits) as (x: number) => number;

const NUMBERS = [
  0,
  -0,
  0.4,
  -0.6,
  1,
  -1,
  2.5,
  255,
  256,
  257,
  -129,
  65504,
  65520,
  1e-8,
  3.4e38,
  1e39,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  2 ** 32 + 5,
  3e9,
  -3e9,
  2 ** 53,
  1e300,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
];

/** What a tensor of `dtype` stores for NUMBERS (a bool stores 0 or 1). */
function stored(dtype: DType): ArrayLike<number> {
  if (dtype === 'bool') return Uint8Array.from(NUMBERS, (v) => (v !== 0 && !Number.isNaN(v) ? 1 : 0));
  if (isHalf(dtype)) return Uint16Array.from(NUMBERS, (v) => toHalfBits(dtype, v));
  const values = typedArrayFor(dtype, NUMBERS.length);
  values.set(NUMBERS);
  return values;
}

/** A stored value as the tensor reads it back (half bits decoded). */
const readBack = (dtype: DType, v: number) => (isHalf(dtype) ? halfBitsToNumber(dtype, v) : v);

describe('kernel IR: casts', () => {
  test('no steps for the same dtype; half types go through float32', () => {
    expect(castSteps('int32', 'int32')).toEqual([]);
    expect(castSteps('float16', 'bool')).toEqual([
      { kind: 'fromHalf', half: 'float16' },
      { kind: 'toByte', fromFloat: true },
    ]);
    expect(castSteps('int32', 'bfloat16')).toEqual([
      { kind: 'toFloat', fromFloat: false, to: 'float32' },
      { kind: 'toHalf', half: 'bfloat16' },
    ]);
  });

  test('every pair of dtypes converts as the CPU copy kernel does, to the bit', () => {
    for (const from of DTYPES) {
      const source = stored(from);
      for (const to of DTYPES) {
        const cast = compiled(from, to);
        const want = Array.from(source, (v) => {
          const value = cast(v);
          // The steps already give what the destination holds: storing it changes nothing.
          const slot = typedArrayFor(to, 1);
          slot[0] = value;
          expect(Object.is(slot[0], value) || (Number.isNaN(slot[0]) && Number.isNaN(value))).toBe(true);
          return readBack(to, value);
        });
        const src = tensor(source as never, { dtype: from });
        const dst = tensor(typedArrayFor(to, source.length) as never, { dtype: to });
        getBackend('cpu').kernels.copy(src, dst);
        const got = Array.from(dst.dataSync() as ArrayLike<number>);
        expect(got, `${from} → ${to}`).toEqual(want);
      }
    }
  });
});
