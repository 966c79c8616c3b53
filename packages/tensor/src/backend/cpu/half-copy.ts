/**
 * Copies between half-precision bits and numbers, one strided run at a time. float32 ↔ half runs, the ones
 * mixed precision makes on every kernel call, read and write the float32 side's bits through a Uint32Array
 * over the same memory: bfloat16 is a shift and a rounding add, and float16 decodes through a table of all
 * 65,536 patterns. Other pairs convert element by element through numbers. Results are those of ../../half.ts.
 */
import { type DType, type TypedArray, isHalf } from '../../dtype.js';
import { float16Values, halfBitsToNumber, toFloat16Bits, toHalfBits } from '../../half.js';

const wordsOf = (a: TypedArray) => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** A run copier for (from, to), of which at least one is a half type. */
export function halfRunCopier(
  from: DType,
  to: DType,
  s: TypedArray,
  d: TypedArray,
): (i: number, si: number, j: number, sj: number, n: number) => void {
  if (from === 'bfloat16' && to === 'float32') {
    const out = wordsOf(d);
    return (i, si, j, sj, n) => {
      for (let k = 0; k < n; k++, i += si, j += sj) out[j] = s[i] << 16;
    };
  }
  if (from === 'float16' && to === 'float32') {
    const table = float16Values();
    return (i, si, j, sj, n) => {
      for (let k = 0; k < n; k++, i += si, j += sj) d[j] = table[s[i]];
    };
  }
  if (from === 'float32' && to === 'bfloat16') {
    const words = wordsOf(s);
    return (i, si, j, sj, n) => {
      for (let k = 0; k < n; k++, i += si, j += sj) {
        const b = words[i];
        // Round to nearest even; a NaN stays a NaN (as toBfloat16Bits).
        d[j] = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
      }
    };
  }
  if (from === 'float32' && to === 'float16') {
    const words = wordsOf(s);
    return (i, si, j, sj, n) => {
      for (let k = 0; k < n; k++, i += si, j += sj) {
        const b = words[i];
        const a = b & 0x7fffffff;
        // Normal halves inline (as toFloat16Bits rounds them); subnormals, overflow and NaN through it.
        if (a < 0x38800000 || a >= 0x477ff000) d[j] = toFloat16Bits(s[i]);
        else {
          let h = (((a >>> 23) - 112) << 10) | ((a >>> 13) & 0x3ff);
          const dropped = a & 0x1fff;
          if (dropped > 0x1000 || (dropped === 0x1000 && h & 1)) h++;
          d[j] = ((b >>> 16) & 0x8000) | h;
        }
      }
    };
  }
  const load = isHalf(from) ? (bits: number) => halfBitsToNumber(from, bits) : (x: number) => x;
  const store = isHalf(to) ? (x: number) => toHalfBits(to, x) : (x: number) => x;
  return (i, si, j, sj, n) => {
    for (let k = 0; k < n; k++, i += si, j += sj) d[j] = store(load(s[i]));
  };
}
