/** Making tensors: from data, constant fills, ranges, seeded random draws, copies across devices. */
import type { RandomArgs } from '../backend/backend.js';
import { getBackend, getDefaultDevice } from '../backend/registry.js';
import { type DType, type TypedArray, dtypeOfArray, isFloat, isHalf, typedArrayFor } from '../dtype.js';
import { encodeHalf } from '../half.js';
import { type Generator, getDefaultGenerator } from '../random.js';
import { type Shape, checkShape, sizeOf } from '../shape.js';
import type { NestedArray, Tensor } from '../tensor.js';
import { empty } from './internal.js';

export interface TensorOptions {
  dtype?: DType;
  device?: string;
  requiresGrad?: boolean;
}

export interface RandomOptions extends TensorOptions {
  generator?: Generator;
}

function finish(t: Tensor, options: TensorOptions): Tensor {
  if (options.requiresGrad) t.requiresGrad = true;
  return t;
}

function backendFor(options: TensorOptions) {
  return getBackend(options.device ?? getDefaultDevice());
}

/** Shape of a nested array, checking that it is not ragged. */
function inferShape(data: NestedArray): number[] {
  const shape: number[] = [];
  let level: NestedArray = data;
  while (Array.isArray(level)) {
    shape.push(level.length);
    if (level.length === 0) break;
    level = level[0];
  }
  const check = (value: NestedArray, depth: number, path: string): void => {
    if (depth === shape.length) {
      if (Array.isArray(value))
        throw new Error(`tensor: ragged nested array at ${path || 'top'}: expected a number, got an array`);
      if (typeof value !== 'number' && typeof value !== 'boolean') {
        throw new Error(`tensor: element at ${path} is ${typeof value}, not a number or boolean`);
      }
      return;
    }
    if (!Array.isArray(value) || value.length !== shape[depth]) {
      const got = Array.isArray(value) ? `length ${value.length}` : 'a number';
      throw new Error(
        `tensor: ragged nested array at ${path || 'top'}: expected length ${shape[depth]}, got ${got}`,
      );
    }
    for (let i = 0; i < value.length; i++) check(value[i], depth + 1, `${path}[${i}]`);
  };
  check(data, 0, '');
  return shape;
}

function inferDtype(data: NestedArray): DType {
  let level: NestedArray = data;
  while (Array.isArray(level) && level.length > 0) level = level[0];
  return typeof level === 'boolean' ? 'bool' : 'float32';
}

/**
 * The array a storage of `dtype` holds for `data`: the same array where it already is one, else converted
 * (bools to 0/1, numbers to half bits). A Uint16Array given with a half dtype holds that dtype's bits.
 */
function storageArray(data: TypedArray | (number | boolean)[], dtype: DType): TypedArray {
  if (isHalf(dtype)) return data instanceof Uint16Array ? data : encodeHalf(dtype, data.map(Number));
  if (ArrayBuffer.isView(data) && !(data instanceof Uint16Array) && dtypeOfArray(data) === dtype) return data;
  const values = typedArrayFor(dtype, data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    values[i] = dtype === 'bool' ? Number(v !== 0 && v !== false) : Number(v);
  }
  return values;
}

/**
 * A tensor from a number, a nested array or a typed array (whose dtype it keeps unless told otherwise). A
 * Uint16Array is read as the bits of `dtype`, which must then be 'float16' or 'bfloat16'.
 */
export function tensor(
  data: NestedArray | TypedArray,
  options: TensorOptions & { shape?: Shape } = {},
): Tensor {
  let values: TypedArray;
  let shape: number[];
  let dtype: DType;
  if (ArrayBuffer.isView(data)) {
    dtype = options.dtype ?? dtypeOfArray(data);
    if (data instanceof Uint16Array && !isHalf(dtype))
      throw new Error(`tensor: a Uint16Array holds float16 or bfloat16 bits, not ${dtype} values`);
    shape = options.shape ? checkShape('tensor', options.shape) : [data.length];
    if (sizeOf(shape) !== data.length) {
      throw new Error(
        `tensor: shape [${shape}] holds ${sizeOf(shape)} elements but the data has ${data.length}`,
      );
    }
    values = storageArray(data, dtype);
  } else {
    shape = inferShape(data);
    dtype = options.dtype ?? inferDtype(data);
    const flat = (Array.isArray(data) ? (data as unknown[]).flat(Number.POSITIVE_INFINITY) : [data]) as (
      | number
      | boolean
    )[];
    values = storageArray(flat, dtype);
    if (options.shape) return tensor(values, { ...options, dtype });
  }
  const backend = backendFor(options);
  const t = empty(backend, shape, dtype);
  backend.write(t.storage, values);
  return finish(t, options);
}

export function full(shape: Shape, value: number, options: TensorOptions = {}): Tensor {
  const backend = backendFor(options);
  const dtype = options.dtype ?? 'float32';
  const t = empty(backend, checkShape('full', shape), dtype);
  backend.kernels.fill(t, dtype === 'bool' ? Number(value !== 0) : value);
  return finish(t, options);
}

export const zeros = (shape: Shape, options: TensorOptions = {}) => full(shape, 0, options);
export const ones = (shape: Shape, options: TensorOptions = {}) => full(shape, 1, options);

function likeOptions(t: Tensor, options: TensorOptions): TensorOptions {
  return { dtype: t.dtype, device: t.device, ...options };
}

export const fullLike = (t: Tensor, value: number, options: TensorOptions = {}) =>
  full(t.shape, value, likeOptions(t, options));
export const zerosLike = (t: Tensor, options: TensorOptions = {}) =>
  full(t.shape, 0, likeOptions(t, options));
export const onesLike = (t: Tensor, options: TensorOptions = {}) => full(t.shape, 1, likeOptions(t, options));

/** Values start, start + step, … below end; `arange(n)` counts 0..n-1. int32 unless a bound is fractional. */
export function arange(start: number, end?: number, step = 1, options: TensorOptions = {}): Tensor {
  const [lo, hi] = end === undefined ? [0, start] : [start, end];
  if (step === 0) throw new Error('arange: step must not be 0');
  const n = Math.max(0, Math.ceil((hi - lo) / step));
  const integral = [lo, hi, step].every(Number.isInteger);
  const dtype = options.dtype ?? (integral ? 'int32' : 'float32');
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = lo + i * step;
  return tensor(values, { ...options, dtype });
}

export function eye(n: number, m = n, options: TensorOptions = {}): Tensor {
  const values = new Float64Array(n * m);
  for (let i = 0; i < Math.min(n, m); i++) values[i * m + i] = 1;
  return tensor(values, { ...options, dtype: options.dtype ?? 'float32', shape: [n, m] });
}

function draw(
  shape: Shape,
  options: RandomOptions,
  args: Omit<RandomArgs, 'key' | 'counter'>,
  dtype: DType,
): Tensor {
  const backend = backendFor(options);
  const generator = options.generator ?? getDefaultGenerator();
  const t = empty(backend, checkShape(args.distribution, shape), dtype);
  backend.kernels.random(t, { ...args, key: generator.key, counter: generator.take(t.size) });
  return finish(t, options);
}

function floatDtype(op: string, options: TensorOptions): DType {
  const dtype = options.dtype ?? 'float32';
  if (!isFloat(dtype))
    throw new Error(`${op}: dtype must be float32, float64, float16 or bfloat16, got ${dtype}`);
  return dtype;
}

/** Uniform on [low, high). */
export function uniform(shape: Shape, low = 0, high = 1, options: RandomOptions = {}): Tensor {
  return draw(shape, options, { distribution: 'uniform', a: low, b: high }, floatDtype('uniform', options));
}

export const rand = (shape: Shape, options: RandomOptions = {}) => uniform(shape, 0, 1, options);

export function normal(shape: Shape, mean = 0, std = 1, options: RandomOptions = {}): Tensor {
  return draw(shape, options, { distribution: 'normal', a: mean, b: std }, floatDtype('normal', options));
}

export const randn = (shape: Shape, options: RandomOptions = {}) => normal(shape, 0, 1, options);

/** Integers uniform on [low, high). */
export function randint(low: number, high: number, shape: Shape, options: RandomOptions = {}): Tensor {
  if (!Number.isInteger(low) || !Number.isInteger(high) || high <= low) {
    throw new Error(`randint: need integers low < high, got [${low}, ${high})`);
  }
  return draw(shape, options, { distribution: 'randint', a: low, b: high }, options.dtype ?? 'int32');
}

export function toDevice(t: Tensor, device: string): Tensor {
  if (device === t.device) return t;
  return tensor(t.dataSync(), { device, dtype: t.dtype, shape: t.shape });
}

export async function toDeviceAsync(t: Tensor, device: string): Promise<Tensor> {
  if (device === t.device) return t;
  return tensor(await t.data(), { device, dtype: t.dtype, shape: t.shape });
}
