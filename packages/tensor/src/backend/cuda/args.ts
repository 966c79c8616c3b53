/**
 * Kernel arguments, packed into one buffer laid out as the kernel's parameter list (each parameter at its
 * natural alignment) and handed to cuLaunchKernel through CU_LAUNCH_PARAM_BUFFER_POINTER: one copy into
 * stable native memory per launch, no per-argument pointer array.
 */
import { MAX_RANK } from './kernels/common.js';

export type ArgKind = 'ptr' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64' | 'dims';

export type KernelArg =
  | readonly ['ptr' | 'i64' | 'u64', bigint | number]
  | readonly ['i32' | 'u32' | 'f32' | 'f64', number]
  | readonly ['dims', readonly number[]];

const SIZE: Record<ArgKind, number> = {
  ptr: 8,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f32: 4,
  f64: 8,
  dims: 8 * MAX_RANK,
};
const ALIGN: Record<ArgKind, number> = { ptr: 8, i32: 4, u32: 4, i64: 8, u64: 8, f32: 4, f64: 8, dims: 8 };

/** The C parameter type each argument kind stands for (used by tests that read kernel signatures). */
export const C_PARAM: Record<ArgKind, RegExp> = {
  ptr: /\*/,
  i32: /^(const )?int$/,
  u32: /^(const )?unsigned int$/,
  i64: /^(const )?long long$/,
  u64: /^(const )?unsigned long long$/,
  f32: /^(const )?float$/,
  f64: /^(const )?double$/,
  dims: /^(const )?Dims$/,
};

/** Byte offset of each argument and the total size. */
export function argLayout(kinds: readonly ArgKind[]): { offsets: number[]; size: number } {
  let at = 0;
  const offsets = kinds.map((k) => {
    at = Math.ceil(at / ALIGN[k]) * ALIGN[k];
    const o = at;
    at += SIZE[k];
    return o;
  });
  return { offsets, size: at };
}

/** Writes the arguments into `view` (little-endian, as every CUDA host is); returns the bytes used. */
export function packArgs(args: readonly KernelArg[], view: DataView): number {
  const { offsets, size } = argLayout(args.map((a) => a[0]));
  if (size > view.byteLength)
    throw new Error(`cuda: ${size} bytes of kernel arguments exceed the ${view.byteLength}-byte buffer`);
  args.forEach((arg, n) => {
    const o = offsets[n];
    switch (arg[0]) {
      case 'ptr':
      case 'u64':
        view.setBigUint64(o, BigInt(arg[1]), true);
        break;
      case 'i64':
        view.setBigInt64(o, BigInt(arg[1]), true);
        break;
      case 'i32':
        view.setInt32(o, arg[1], true);
        break;
      case 'u32':
        view.setUint32(o, arg[1] >>> 0, true);
        break;
      case 'f32':
        view.setFloat32(o, arg[1], true);
        break;
      case 'f64':
        view.setFloat64(o, arg[1], true);
        break;
      case 'dims': {
        if (arg[1].length > MAX_RANK) throw new Error(`cuda: ${arg[1].length} dims exceed ${MAX_RANK}`);
        for (let d = 0; d < MAX_RANK; d++) view.setBigInt64(o + 8 * d, BigInt(arg[1][d] ?? 0), true);
        break;
      }
    }
  });
  return size;
}
