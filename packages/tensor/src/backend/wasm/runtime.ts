/**
 * The one instance of the kernel module and its memory. Kernels copy their operands into this memory,
 * run, and copy results out; `reserve` grows the memory as needed. Only standard WebAssembly JS API is
 * used (no Node APIs), so this runs in browsers too. The module is small (a few KB), so it is compiled
 * synchronously, which browsers allow for modules under 4 KB on the main thread and without limit in workers.
 */
import { buildKernelModule, gemmName } from './kernels.js';

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}

/** The WebAssembly namespace, typed locally (the project compiles without the DOM library). */
function wasmApi(): WasmApi | undefined {
  return (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
}

/** A module whose one function executes `i32.const 0; i8x16.splat; drop`: valid only with SIMD. */
const SIMD_PROBE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00,
  0x0a, 0x09, 0x01, 0x07, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x1a, 0x0b,
]);

let simdSupported: boolean | undefined;

/** Whether this engine has WebAssembly with 128-bit SIMD. */
export function wasmSimdSupported(): boolean {
  if (simdSupported === undefined) {
    const api = wasmApi();
    try {
      simdSupported = api?.validate(SIMD_PROBE) === true;
    } catch {
      simdSupported = false;
    }
  }
  return simdSupported;
}

export type GemmFn = (ap: number, bp: number, cp: number, K: number, ldc: number) => void;
export type SoftmaxFn = (xp: number, op: number, rows: number, width: number, mode: number) => void;

export interface WasmRuntime {
  /** gemm[R][W]: the R-row, W-column micro-kernel (R in 1..4, W in {4, 8}). */
  readonly gemm: Record<number, Record<number, GemmFn>>;
  readonly softmax: SoftmaxFn;
  /** Ensures at least `bytes` bytes of memory; returns a Float32Array over all of it (valid until the next reserve). */
  reserve(bytes: number): Float32Array;
}

const PAGE = 65536;
let runtime: WasmRuntime | undefined;

/** The shared runtime, instantiated on first use. Throws where WebAssembly SIMD is unavailable. */
export function getWasmRuntime(): WasmRuntime {
  if (runtime) return runtime;
  const api = wasmApi();
  if (!api || !wasmSimdSupported()) throw new Error('WebAssembly SIMD is not supported by this engine');
  const memory = new api.Memory({ initial: 16 });
  const instance = new api.Instance(new api.Module(buildKernelModule()), {
    env: { memory, log: Math.log },
  });
  const ex = instance.exports;
  const gemm: Record<number, Record<number, GemmFn>> = {};
  for (const R of [1, 2, 3, 4]) {
    gemm[R] = {};
    for (const W of [4, 8]) gemm[R][W] = ex[gemmName(R, W)] as GemmFn;
  }
  let view = new Float32Array(memory.buffer);
  runtime = {
    gemm,
    softmax: ex.softmax as SoftmaxFn,
    reserve(bytes: number): Float32Array {
      const have = memory.buffer.byteLength;
      if (bytes > have) memory.grow(Math.ceil((bytes - have) / PAGE));
      if (view.buffer !== memory.buffer) view = new Float32Array(memory.buffer);
      return view;
    },
  };
  return runtime;
}
