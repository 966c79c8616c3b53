/**
 * A stand-in device for the cuda backend's kernels on a machine without a GPU: each generated kernel source
 * is compiled as host C++ (g++, with shim.h standing in for the CUDA built-ins) into a small shared library,
 * loaded through koffi, and launched on CPU threads (runtime.cpp). "Device memory" is host memory from
 * malloc. The backend it builds uses the real launchers (src/backend/cuda/kernels.ts), so the cross-backend
 * suite exercises the generated code's logic end to end. It says nothing about GPU numerics or speed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DType, type TypedArray, bytesPerElement, typedArrayFor } from '../../../src/dtype.js';
import type { Backend, Storage } from '../../../src/backend/backend.js';
import {
  type ArgKind,
  C_PARAM,
  type KernelArg,
  argLayout,
  packArgs,
} from '../../../src/backend/cuda/args.js';
import { loadKoffi } from '../../../src/backend/cuda/ffi.js';
import { DEVICE_ERRORS } from '../../../src/backend/cuda/kernels/indexing.js';
import type { KernelSource } from '../../../src/backend/cuda/kernels/common.js';
import { CUDA_HALF_KERNELS, cudaKernels } from '../../../src/backend/cuda/kernels.js';
import { enableHalfCompute } from '../../../src/backend/half-compute.js';
import { registerBackend } from '../../../src/backend/registry.js';
import type { CudaStorage, Launcher } from '../../../src/backend/cuda/launcher.js';
import { kernelParams } from '../signature.js';

const here = dirname(fileURLToPath(import.meta.url));

export function findGxx(): string | null {
  return ['/usr/bin/g++', '/usr/local/bin/g++'].find((p) => existsSync(p)) ?? null;
}

/**
 * Registers the emulated device as backend `name` (built on first use) where g++ is found. `registered`
 * says whether it was; `cleanup()` removes its build folder, if it was built.
 */
export function registerEmulatedCuda(name: string): { registered: boolean; cleanup: () => void } {
  if (!findGxx()) return { registered: false, cleanup: () => {} };
  let built: { cleanup: () => void } | undefined;
  registerBackend(name, async () => {
    const backend = await createEmulatedCudaBackend(name);
    built = backend;
    return backend;
  });
  return { registered: true, cleanup: () => built?.cleanup() };
}

type Fn = (...args: unknown[]) => unknown;

/** The C++ entry that unpacks the argument buffer (laid out by args.ts) into the kernel's parameters. */
function trampoline(kernel: KernelSource): string {
  const params = kernelParams(kernel.source, kernel.name);
  const kinds = params.map(
    (p) => (Object.keys(C_PARAM) as ArgKind[]).find((k) => C_PARAM[k].test(p.type)) as ArgKind,
  );
  const { offsets } = argLayout(kinds);
  const args = params.map((p, i) => `*(${p.type}*)(a + ${offsets[i]})`).join(', ');
  return `
extern "C" void ar1_emu_run(void (*)(const unsigned char*), const unsigned char*, unsigned, unsigned, unsigned, unsigned);
static void ar1_emu_entry(const unsigned char* a) { ${kernel.name}(${args}); }
extern "C" void ar1_emu_launch(unsigned gx, unsigned gy, unsigned gz, unsigned threads, const unsigned char* a) {
  ar1_emu_run(&ar1_emu_entry, a, gx, gy, gz, threads);
}`;
}

export async function createEmulatedCudaBackend(
  name = 'cuda-emu',
): Promise<Backend & { compiled: () => number; cleanup: () => void }> {
  const gxx = findGxx();
  if (!gxx) throw new Error('cuda emulator: g++ not found');
  const koffi = await loadKoffi();
  const dir = mkdtempSync(join(tmpdir(), 'ar1-cuda-emu-'));
  const runtime = join(dir, 'runtime.o');
  execFileSync(gxx, ['-O1', '-std=c++20', '-fPIC', '-c', join(here, 'runtime.cpp'), '-o', runtime]);
  const libc = koffi.load('libc.so.6');
  const malloc = libc.func('void *malloc(size_t size)') as Fn;
  const free = libc.func('void free(void *p)') as Fn;
  const memcpy = libc.func('void *memcpy(void *dst, const void *src, size_t n)') as Fn;
  const memset = libc.func('void *memset(void *dst, int value, size_t n)') as Fn;
  const launchers = new Map<string, Fn>();

  const compile = (kernel: KernelSource): Fn => {
    const known = launchers.get(kernel.name);
    if (known) return known;
    const src = join(dir, `${kernel.name}.cpp`);
    const lib = join(dir, `${kernel.name}.so`);
    writeFileSync(src, `${kernel.source}\n${trampoline(kernel)}\n`);
    execFileSync(gxx, [
      '-O1',
      '-std=c++20',
      '-w',
      '-fPIC',
      '-shared',
      '-include',
      join(here, 'shim.h'),
      src,
      runtime,
      '-o',
      lib,
      '-lpthread',
    ]);
    const fn = koffi
      .load(lib)
      .func(
        'void ar1_emu_launch(unsigned int gx, unsigned int gy, unsigned int gz, unsigned int threads, const uint8_t *args)',
      ) as Fn;
    launchers.set(kernel.name, fn);
    return fn;
  };

  const hostAlloc = (bytes: number): bigint => {
    const p = malloc(Math.max(bytes, 1)) as bigint;
    if (!p) throw new Error(`cuda emulator: malloc(${bytes}) failed`);
    return p;
  };
  const errorWord = hostAlloc(4);
  memset(errorWord, 0, 4);
  const argBuffer = new Uint8Array(4096);

  const launcher: Launcher = {
    // Few "multiprocessors" keep grid-stride grids small: fewer blocks to walk on CPU threads.
    multiprocessors: 1,
    errorWord,
    launch(kernel: KernelSource, grid: readonly number[], block: number, args: readonly KernelArg[]) {
      const [gx, gy = 1, gz = 1] = grid;
      if (gx === 0 || gy === 0 || gz === 0) return;
      packArgs(args, new DataView(argBuffer.buffer));
      compile(kernel)(gx, gy, gz, block, argBuffer);
    },
    scratch: (bytes: number) => ({ ptr: hostAlloc(bytes), bytes }),
    release: (block) => free(block.ptr),
    zero: (ptr: bigint, bytes: number) => {
      if (bytes > 0) memset(ptr, 0, bytes);
    },
  };

  const raise = () => {
    const word = new Int32Array(1);
    memcpy(word, errorWord, 4);
    if (word[0] === 0) return;
    memset(errorWord, 0, 4);
    throw new Error(
      `cuda ${DEVICE_ERRORS[word[0] as keyof typeof DEVICE_ERRORS] ?? `device error ${word[0]}`}`,
    );
  };
  const read = (storage: Storage): TypedArray => {
    raise();
    const s = storage as CudaStorage;
    const out = typedArrayFor(s.dtype, s.size);
    if (out.byteLength > 0) memcpy(out, s.ptr, out.byteLength);
    return out;
  };

  return enableHalfCompute({
    name,
    kernels: cudaKernels(launcher),
    halfKernels: CUDA_HALF_KERNELS,
    compiled: () => launchers.size,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    alloc(dtype: DType, size: number): CudaStorage {
      const bytes = size * bytesPerElement(dtype);
      const ptr = hostAlloc(bytes);
      return { backend: name, dtype, size, ptr, block: { ptr, bytes } };
    },
    free: (storage: Storage) => free((storage as CudaStorage).ptr),
    write(storage: Storage, data: TypedArray, offset = 0) {
      const s = storage as CudaStorage;
      if (data.byteLength > 0)
        memcpy(s.ptr + BigInt(offset * bytesPerElement(s.dtype)), data, data.byteLength);
    },
    read: async (storage: Storage) => read(storage),
    readSync: read,
    sync: async () => raise(),
  });
}
