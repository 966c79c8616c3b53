/**
 * The cuda backend's host-side pieces, for real on a machine without a GPU: finding libraries (and the
 * errors when they are missing, through the real dynamic loader), the kernel-argument layout against the C
 * compiler's own struct layout, the caching allocator, the compiled-kernel cache, and NVRTC itself where a
 * libnvrtc can be found (pip's nvidia-cuda-nvrtc wheel is enough; the test skips with one line otherwise).
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { initBackend } from '../src/index.js';
import { CachingAllocator, type DeviceMemory, sizeClass } from '../src/backend/cuda/allocator.js';
import { type ArgKind, argLayout, packArgs } from '../src/backend/cuda/args.js';
import { CUBLAS_PROTOTYPES } from '../src/backend/cuda/cublas.js';
import { DRIVER_PROTOTYPES, loadDriver } from '../src/backend/cuda/driver.js';
import { type KoffiModule, loadKoffi } from '../src/backend/cuda/ffi.js';
import { kernelCatalog } from '../src/backend/cuda/kernels/catalog.js';
import {
  LibraryNotFoundError,
  type SearchEnv,
  libraryCandidates,
  loadLibrary,
  systemSearchEnv,
} from '../src/backend/cuda/libs.js';
import { ImageCache, cacheDir } from '../src/backend/cuda/modules.js';
import { NVRTC_PROTOTYPES, NvrtcError, loadNvrtc } from '../src/backend/cuda/nvrtc.js';
import { findNvcc } from './cuda/nvcc.js';

const scratch = mkdtempSync(join(tmpdir(), 'ar1-cuda-host-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A search environment over a real temporary folder tree, with a controlled set of variables. */
function fakeEnv(env: Record<string, string>, home = join(scratch, 'home')): SearchEnv {
  const real = systemSearchEnv();
  return { ...real, env, home };
}

describe('finding the NVIDIA libraries', () => {
  const root = join(scratch, 'libs');
  const wheel = join(root, 'venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib');
  const toolkit = join(root, 'cuda/lib64');
  for (const d of [wheel, toolkit, join(toolkit, 'stubs'), join(root, 'ld')])
    mkdirSync(d, { recursive: true });
  // Not shared objects: the loader must reject them, and the error must say which file and why.
  writeFileSync(join(wheel, 'libnvrtc.so.12'), 'not an ELF file');
  writeFileSync(join(toolkit, 'libnvrtc.so.13'), 'not an ELF file');
  writeFileSync(join(toolkit, 'stubs', 'libcuda.so'), 'stub');
  writeFileSync(join(root, 'ld', 'libcuda.so.1'), 'not an ELF file');

  test('search order: explicit variable, LD_LIBRARY_PATH, CUDA_PATH, system folders, Python wheels, soname', () => {
    const env = {
      LD_LIBRARY_PATH: join(root, 'ld'),
      CUDA_PATH: join(root, 'cuda'),
      VIRTUAL_ENV: join(root, 'venv'),
    };
    const nvrtc = libraryCandidates('nvrtc', fakeEnv(env));
    const at = (p: string) => nvrtc.indexOf(p);
    expect(at(join(toolkit, 'libnvrtc.so.13'))).toBeGreaterThanOrEqual(0);
    expect(at(join(wheel, 'libnvrtc.so.12'))).toBeGreaterThan(at(join(toolkit, 'libnvrtc.so.13')));
    expect(nvrtc.at(-1)).toMatch(/^libnvrtc\.so/);
    const cuda = libraryCandidates('cuda', fakeEnv(env));
    expect(cuda[0]).toBe(join(root, 'ld', 'libcuda.so.1'));
    // The driver stub under lib64/stubs loads but fails every call: never a candidate.
    expect(cuda.some((p) => p.includes('stubs'))).toBe(false);
    expect(libraryCandidates('cuda', fakeEnv({ ...env, AGENT_R1_LIBCUDA: '/opt/x/libcuda.so.1' }))).toEqual([
      '/opt/x/libcuda.so.1',
    ]);
  });

  test('a missing or broken library is a clear error naming each file tried and why', async () => {
    const koffi = await loadKoffi();
    const env = fakeEnv({ CUDA_PATH: join(root, 'cuda'), VIRTUAL_ENV: join(root, 'venv') });
    let error: unknown;
    try {
      loadLibrary('nvrtc', (p) => koffi.load(`${p.includes('/') ? '' : `${scratch}/nowhere/`}${p}`), env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LibraryNotFoundError);
    const message = (error as Error).message;
    expect(message).toContain('NVRTC');
    expect(message).toContain('AGENT_R1_LIBNVRTC');
    expect(message).toContain(`${join(toolkit, 'libnvrtc.so.13')} (`);
    expect(message).toContain(`${join(wheel, 'libnvrtc.so.12')} (`);
    expect(message).toMatch(/invalid ELF header|file too short|not a dynamic/i);
  });

  test('an explicit path loads through the real loader', async () => {
    const koffi = await loadKoffi();
    const { path } = loadLibrary('cuda', (p) => koffi.load(p), fakeEnv({ AGENT_R1_LIBCUDA: 'libc.so.6' }));
    expect(path).toBe('libc.so.6');
  });

  test('loadDriver reports a missing libcuda with the way to fix it', async () => {
    const env = fakeEnv({ AGENT_R1_LIBCUDA: join(root, 'ld', 'libcuda.so.1') });
    await expect(loadDriver(env)).rejects.toThrow(
      /CUDA driver library \(libcuda\.so\).*NVIDIA driver.*AGENT_R1_LIBCUDA/s,
    );
  });

  const hasDriver = libraryCandidates('cuda', systemSearchEnv()).some(
    (p) => p.includes('/') && existsSync(p),
  );
  test.skipIf(hasDriver)(
    "initBackend('cuda') on this machine rejects with the missing library named",
    async () => {
      await expect(initBackend('cuda')).rejects.toThrow(/could not load the CUDA driver library/);
    },
  );
});

describe('kernel arguments', () => {
  const kinds: ArgKind[] = [
    'ptr',
    'i32',
    'i64',
    'f32',
    'dims',
    'i32',
    'f64',
    'u32',
    'u32',
    'u64',
    'f32',
    'dims',
    'ptr',
  ];
  const cType: Record<ArgKind, string> = {
    ptr: 'float *',
    i32: 'int',
    u32: 'unsigned int',
    i64: 'long long',
    u64: 'unsigned long long',
    f32: 'float',
    f64: 'double',
    dims: 'Dims',
  };
  const gcc = ['/usr/bin/gcc', '/usr/bin/cc'].find((p) => existsSync(p));

  test.skipIf(!gcc)('the packed layout is the C compiler’s struct layout of the parameter list', () => {
    const fields = kinds.map((k, i) => `  ${cType[k]} a${i};`).join('\n');
    const prints = kinds.map((_, i) => `printf("%zu ", offsetof(struct P, a${i}));`).join(' ');
    const src = `#include <stdio.h>\n#include <stddef.h>\ntypedef struct { long long v[8]; } Dims;\nstruct P {\n${fields}\n};\nint main(void) { ${prints} printf("%zu\\n", sizeof(struct P)); return 0; }\n`;
    writeFileSync(join(scratch, 'layout.c'), src);
    execFileSync(gcc as string, ['-o', join(scratch, 'layout'), join(scratch, 'layout.c')]);
    const numbers = execFileSync(join(scratch, 'layout'), { encoding: 'utf8' }).trim().split(' ').map(Number);
    const { offsets, size } = argLayout(kinds);
    expect(offsets).toEqual(numbers.slice(0, -1));
    // The struct may pad its tail to 8; the parameter buffer ends at the last argument.
    expect(Math.ceil(size / 8) * 8).toBe(numbers.at(-1));
  });

  test('values land at their offsets, little-endian', () => {
    const view = new DataView(new ArrayBuffer(256));
    const size = packArgs(
      [
        ['ptr', 0x7f00_1234_5678n],
        ['i32', -3],
        ['dims', [2, 3]],
        ['f32', 0.5],
        ['f64', -2.25],
      ],
      view,
    );
    expect(size).toBe(8 + 4 + 4 + 64 + 4 + 4 + 8);
    expect(view.getBigUint64(0, true)).toBe(0x7f00_1234_5678n);
    expect(view.getInt32(8, true)).toBe(-3);
    expect(view.getBigInt64(16, true)).toBe(2n);
    expect(view.getBigInt64(24, true)).toBe(3n);
    expect(view.getBigInt64(16 + 56, true)).toBe(0n);
    expect(view.getFloat32(80, true)).toBe(0.5);
    expect(view.getFloat64(88, true)).toBe(-2.25);
    expect(() => packArgs([['dims', Array(9).fill(1)]], view)).toThrow(/9 dims/);
  });
});

describe('caching allocator', () => {
  function fakeMemory(capacity: number) {
    let used = 0;
    let next = 0x1000n;
    const sizes = new Map<bigint, number>();
    const log: string[] = [];
    const memory: DeviceMemory = {
      alloc(bytes) {
        if (used + bytes > capacity) throw Object.assign(new Error('out of memory'), { oom: true });
        used += bytes;
        next += BigInt(bytes);
        sizes.set(next, bytes);
        log.push(`alloc ${bytes}`);
        return next;
      },
      free(ptr) {
        used -= sizes.get(ptr) ?? 0;
        log.push(`free ${sizes.get(ptr)}`);
      },
      drain: () => log.push('drain'),
      isOutOfMemory: (e) => (e as { oom?: boolean }).oom === true,
    };
    return { memory, log, used: () => used };
  }

  test('size classes', () => {
    expect([0, 1, 512, 513, 4000, 1 << 20].map(sizeClass)).toEqual([0, 512, 512, 1024, 4096, 1 << 20]);
    expect(sizeClass((1 << 20) + 1)).toBe(2 << 20);
    expect(sizeClass(5 << 20)).toBe(6 << 20);
  });

  test('freed blocks are reused by their class without going back to the driver', () => {
    const { memory, log } = fakeMemory(1 << 30);
    const a = new CachingAllocator(memory);
    const x = a.alloc(1000);
    a.free(x);
    const y = a.alloc(700);
    expect(y.ptr).toBe(x.ptr);
    expect(log).toEqual(['alloc 1024']);
    expect(a.stats()).toMatchObject({ liveBlocks: 1, liveBytes: 1024, pooledBlocks: 0, reservedBytes: 1024 });
    expect(a.alloc(0)).toEqual({ ptr: 0n, bytes: 0 });
  });

  test('out of memory: the pool goes back to the driver (after the stream drains) and the allocation retries', () => {
    const { memory, log, used } = fakeMemory(8 << 20);
    const a = new CachingAllocator(memory);
    const blocks = [a.alloc(2 << 20), a.alloc(2 << 20), a.alloc(2 << 20)];
    for (const b of blocks) a.free(b);
    const big = a.alloc(6 << 20);
    expect(big.bytes).toBe(6 << 20);
    expect(log.slice(3)).toEqual(['drain', 'free 2097152', 'free 2097152', 'free 2097152', 'alloc 6291456']);
    expect(used()).toBe(6 << 20);
    expect(a.stats()).toMatchObject({ pooledBlocks: 0, reservedBytes: 6 << 20, peakReservedBytes: 6 << 20 });
    expect(() => a.alloc(4 << 20)).toThrow(/out of memory/);
  });
});

describe('compiled-kernel cache', () => {
  const kernel = { name: 'ar1_test', source: 'extern "C" __global__ void ar1_test() {}' };

  test('memory, then disk across instances, keyed by source and architecture', () => {
    const dir = join(scratch, 'cache');
    let compiles = 0;
    const compile = (src: string, name: string, arch: string) => {
      compiles++;
      return new TextEncoder().encode(`${name}@${arch}:${src.length}`);
    };
    const first = new ImageCache(compile, 'sm_90', 'nvrtc-13.0', dir);
    const image = first.image(kernel);
    first.image(kernel);
    expect(first.stats).toEqual({ compiled: 1, fromDisk: 0, fromMemory: 1 });
    const second = new ImageCache(compile, 'sm_90', 'nvrtc-13.0', dir);
    expect(second.image(kernel)).toEqual(image);
    expect(second.stats.fromDisk).toBe(1);
    expect(readdirSync(dir).filter((f) => f.endsWith('.cubin'))).toHaveLength(1);
    new ImageCache(compile, 'sm_80', 'nvrtc-13.0', dir).image(kernel);
    new ImageCache(compile, 'sm_90', 'nvrtc-13.0', dir).image({ ...kernel, source: `${kernel.source}\n` });
    expect(compiles).toBe(3);
  });

  test('where the cache lives', () => {
    expect(cacheDir({ AGENT_R1_CACHE: '/c' })).toBe('/c/cuda');
    expect(cacheDir({ AGENT_R1_CACHE: 'off' })).toBeNull();
    expect(cacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/agent-r1/cuda');
    expect(cacheDir({})).toMatch(/\.cache\/agent-r1\/cuda$/);
  });
});

const nvrtc = await loadNvrtc().catch((e: Error) => {
  if (process.env.REQUIRE_NVRTC === '1') throw e;
  return e;
});

describe.skipIf(nvrtc instanceof Error)('NVRTC (real library)', () => {
  test('one kernel of each family compiles to a CUBIN for sm_90', { timeout: 120_000 }, () => {
    if (nvrtc instanceof Error) return;
    const byFamily = new Map<string, { name: string; source: string }>();
    for (const k of kernelCatalog()) byFamily.set(k.name.split('_').slice(1, 3).join('_'), k);
    for (const k of byFamily.values()) {
      const { image } = nvrtc.compile(k.source, k.name, 'sm_90');
      expect([...image.subarray(0, 4)], k.name).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    }
    const ptx = nvrtc.compile(kernel0().source, kernel0().name, 'compute_80').image;
    expect(new TextDecoder().decode(ptx)).toContain(`.entry ${kernel0().name}`);
  });

  test('a compile error names the kernel and carries the log', () => {
    if (nvrtc instanceof Error) return;
    const bad = 'extern "C" __global__ void ar1_bad(float* x) { x[0] = undefined_name; }';
    expect(() => nvrtc.compile(bad, 'ar1_bad', 'sm_90')).toThrow(NvrtcError);
    expect(() => nvrtc.compile(bad, 'ar1_bad', 'sm_90')).toThrow(
      /kernel 'ar1_bad' for sm_90[\s\S]*undefined_name/,
    );
  });
});

describe.skipIf(!(nvrtc instanceof Error))('NVRTC (real library)', () => {
  test.skip(`no libnvrtc found (${nvrtc instanceof Error ? nvrtc.message.split('\n')[0] : ''})`, () => {});
});

function kernel0() {
  return kernelCatalog()[0];
}

/**
 * The FFI declarations against NVIDIA's own headers: each symbol koffi binds must be what the header's
 * function becomes after its versioning macros (cuMemAlloc → cuMemAlloc_v2), with the same number of
 * parameters. Headers: cuda.h beside nvcc, nvrtc.h beside nvcc or in the NVRTC wheel; skipped without them.
 */
function headerFor(file: string): string | null {
  const nvccBin = findNvcc();
  const dirs = [
    nvccBin ? join(nvccBin, '..', '..', 'include') : '',
    '/usr/local/cuda/include',
    ...libraryCandidates('nvrtc', systemSearchEnv())
      .filter((p) => p.includes('/'))
      .map((p) => join(p, '..', '..', 'include')),
  ];
  const dir = dirs.find((d) => d && existsSync(join(d, file)));
  return dir ? readFileSync(join(dir, file), 'utf8') : null;
}

function checkAgainstHeader(prototypes: Record<string, string>, header: string): void {
  for (const proto of Object.values(prototypes)) {
    const m = /(\w+)\((.*)\)$/.exec(proto);
    if (!m) throw new Error(`unparsable prototype ${proto}`);
    const [, symbol, params] = m;
    const base = symbol.replace(/_v2$/, '');
    if (base !== symbol)
      expect(header, symbol).toMatch(
        new RegExp(`#define\\s+${base}\\s+(__CUDA_API_PT[DS][SZ]\\()?${symbol}\\b`),
      );
    const decl = new RegExp(`\\b${base}\\s*\\(([^;{]*?)\\)\\s*;`).exec(
      header.replace(/\/\*[\s\S]*?\*\//g, ''),
    );
    expect(decl, `${base} is declared in the header`).not.toBeNull();
    const count = (s: string) => (s.trim() === '' || s.trim() === 'void' ? 0 : s.split(',').length);
    expect(count(params), symbol).toBe(count((decl as RegExpExecArray)[1]));
  }
}

describe('cuBLAS bindings', () => {
  test('every prototype parses as a C declaration, GEMMs with the 18 (Ex: 23) parameters cuBLAS documents', async () => {
    const koffi = (await loadKoffi()) as KoffiModule & {
      proto(p: string): unknown;
      introspect(t: unknown): { proto: { arguments: unknown[] } };
    };
    for (const [name, proto] of Object.entries(CUBLAS_PROTOTYPES)) {
      const args = koffi.introspect(koffi.proto(proto)).proto.arguments;
      if (name.includes('gemm')) expect(args.length, name).toBe(18);
      if (name.includes('GemmStridedBatchedEx')) expect(args.length, name).toBe(23);
    }
  });

  test('a missing cuBLAS is an error naming it and the variable that points to it', () => {
    const none: SearchEnv = { env: {}, home: scratch, exists: () => false, list: () => [] };
    expect(() =>
      loadLibrary(
        'cublas',
        () => {
          throw new Error('cannot open shared object file');
        },
        none,
      ),
    ).toThrow(/cuBLAS \(libcublas\.so\).*AGENT_R1_LIBCUBLAS.*libcublas\.so \(cannot open/);
  });
});

const cudaH = headerFor('cuda.h');
const nvrtcH = headerFor('nvrtc.h');
describe('FFI prototypes match NVIDIA headers', () => {
  test.skipIf(!cudaH)('driver API (cuda.h)', () => checkAgainstHeader(DRIVER_PROTOTYPES, cudaH as string));
  test.skipIf(!nvrtcH)('NVRTC (nvrtc.h)', () => checkAgainstHeader(NVRTC_PROTOTYPES, nvrtcH as string));
});
