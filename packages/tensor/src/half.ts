/**
 * float16 (IEEE binary16) and bfloat16 (the top half of a float32): the bit patterns half-precision tensors
 * store, and conversions to and from numbers. A number is first rounded to float32 and then to the half type
 * with round-to-nearest-even, as PyTorch's `Half` and `BFloat16` convert; NaN stays NaN, and values past the
 * largest finite half round to infinity.
 */
export type HalfDType = 'float16' | 'bfloat16';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The bfloat16 bits of the float32 whose bits are `b`, rounded to nearest even; a NaN stays a (quiet) NaN. */
export function bfloat16FromFloat32Bits(b: number): number {
  if ((b & 0x7fffffff) > 0x7f800000) return (b >>> 16) | 0x40;
  // Adding 0x7fff plus the kept part's lowest bit rounds ties to even; the sum stays below 2^32.
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** The bfloat16 bits of x, rounded to nearest even. */
export function toBfloat16Bits(x: number): number {
  f32[0] = x;
  return bfloat16FromFloat32Bits(u32[0]);
}

export function bfloat16BitsToNumber(bits: number): number {
  u32[0] = bits << 16;
  return f32[0];
}

/**
 * The float16 bits of the float32 whose bits are `b`, rounded to nearest even (subnormals included), in
 * integer arithmetic: the algorithm of the CUDA and WGSL conversions too. Normal halves are handled here and
 * the rest apart, so that this stays small enough to be inlined into conversion loops.
 */
export function float16FromFloat32Bits(b: number): number {
  const abs = b & 0x7fffffff;
  if (abs < 0x38800000 || abs >= 0x477ff000) return float16OutsideNormals((b >>> 16) & 0x8000, abs);
  let half = (((abs >>> 23) - 112) << 10) | ((abs >>> 13) & 0x3ff); // rebias the exponent: 127 - 15
  const dropped = abs & 0x1fff;
  if (dropped > 0x1000 || (dropped === 0x1000 && half & 1)) half++; // a carry moves into the exponent
  return ((b >>> 16) & 0x8000) | half;
}

/** Infinity, NaN, overflow (65520 and up: 65504 is the largest half) and subnormal halves. */
function float16OutsideNormals(sign: number, abs: number): number {
  if (abs >= 0x7f800000) return sign | (abs > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (abs >= 0x477ff000) return sign | 0x7c00;
  // Below 2^-14 the half is subnormal, a multiple of 2^-24: the significand shifted right, rounded.
  if (abs < 0x33000000) return sign; // below 2^-25 (and 2^-25 itself, a tie to even) rounds to zero
  const shift = 126 - (abs >>> 23);
  const significand = (abs & 0x7fffff) | 0x800000;
  let units = significand >>> shift;
  const rest = significand & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rest > halfway || (rest === halfway && units & 1)) units++;
  return sign | units;
}

/** The float16 bits of x, rounded to nearest even (subnormals included). */
export function toFloat16Bits(x: number): number {
  f32[0] = x;
  return float16FromFloat32Bits(u32[0]);
}

export function float16BitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

export function toHalfBits(dtype: HalfDType, x: number): number {
  return dtype === 'bfloat16' ? toBfloat16Bits(x) : toFloat16Bits(x);
}

export function halfBitsToNumber(dtype: HalfDType, bits: number): number {
  return dtype === 'bfloat16' ? bfloat16BitsToNumber(bits) : float16BitsToNumber(bits);
}

/** The half bits of each value. */
export function encodeHalf(dtype: HalfDType, values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  const convert = dtype === 'bfloat16' ? toBfloat16Bits : toFloat16Bits;
  for (let i = 0; i < values.length; i++) out[i] = convert(values[i]);
  return out;
}

let float16Table: Float32Array | undefined;

/** The float32 value of every float16 pattern (256 KiB, built on first use): decoding is a lookup. */
export function float16Values(): Float32Array {
  if (!float16Table) {
    float16Table = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) float16Table[bits] = float16BitsToNumber(bits);
  }
  return float16Table;
}

/** The values of half bits, as float32 (which holds every float16 and bfloat16 value exactly). */
export function decodeHalf(dtype: HalfDType, bits: Uint16Array): Float32Array {
  if (dtype === 'bfloat16') {
    const wide = new Uint32Array(bits.length);
    for (let i = 0; i < bits.length; i++) wide[i] = bits[i] << 16;
    return new Float32Array(wide.buffer);
  }
  const table = float16Values();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]];
  return out;
}
