/**
 * NVRTC through koffi: compiles one generated source for one GPU architecture to a CUBIN (loaded by
 * cuModuleLoadData without a PTX JIT step, so a newer NVRTC cannot outrun an older driver's PTX ISA).
 * A failed compile throws with the kernel name, the architecture and NVRTC's log.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type KoffiModule, loadKoffi, outPointer } from './ffi.js';
import { loadLibrary, type SearchEnv, systemSearchEnv } from './libs.js';

const NVRTC_SUCCESS = 0;

export const NVRTC_PROTOTYPES = {
  nvrtcVersion: 'int nvrtcVersion(_Out_ int *major, _Out_ int *minor)',
  nvrtcGetErrorString: 'const char *nvrtcGetErrorString(int result)',
  nvrtcCreateProgram:
    'int nvrtcCreateProgram(_Out_ void **program, const char *source, const char *name, int headers, void *headerSources, void *headerNames)',
  nvrtcCompileProgram: 'int nvrtcCompileProgram(void *program, int count, const char **options)',
  nvrtcGetProgramLogSize: 'int nvrtcGetProgramLogSize(void *program, _Out_ size_t *size)',
  nvrtcGetProgramLog: 'int nvrtcGetProgramLog(void *program, uint8_t *log)',
  nvrtcGetCUBINSize: 'int nvrtcGetCUBINSize(void *program, _Out_ size_t *size)',
  nvrtcGetCUBIN: 'int nvrtcGetCUBIN(void *program, uint8_t *cubin)',
  nvrtcGetPTXSize: 'int nvrtcGetPTXSize(void *program, _Out_ size_t *size)',
  nvrtcGetPTX: 'int nvrtcGetPTX(void *program, uint8_t *ptx)',
  nvrtcDestroyProgram: 'int nvrtcDestroyProgram(_Inout_ void **program)',
} as const;

type Fn = (...args: unknown[]) => unknown;

export class NvrtcError extends Error {
  constructor(
    readonly kernel: string,
    readonly arch: string,
    message: string,
    readonly log: string,
  ) {
    super(`cuda: NVRTC could not compile kernel '${kernel}' for ${arch}: ${message}${log ? `\n${log}` : ''}`);
    this.name = 'NvrtcError';
  }
}

export interface CompileResult {
  /** The CUBIN for `sm_*` targets, or NUL-terminated PTX for `compute_*` targets. */
  image: Uint8Array;
  log: string;
}

export interface Nvrtc {
  readonly path: string;
  readonly version: string;
  compile(source: string, kernel: string, arch: string, options?: readonly string[]): CompileResult;
}

/** Compile flags every kernel shares: no fast-math (results track the CPU backend), C++17. */
export function compileOptions(arch: string, extra: readonly string[] = []): string[] {
  return [`--gpu-architecture=${arch}`, '--std=c++17', ...extra];
}

export async function loadNvrtc(search: SearchEnv = systemSearchEnv()): Promise<Nvrtc> {
  const koffi: KoffiModule = await loadKoffi();
  const { lib, path } = loadLibrary('nvrtc', (p) => koffi.load(p), search);
  preloadBuiltins(koffi, path);
  const f = {} as Record<keyof typeof NVRTC_PROTOTYPES, Fn>;
  for (const [name, proto] of Object.entries(NVRTC_PROTOTYPES))
    f[name as keyof typeof NVRTC_PROTOTYPES] = lib.func(proto) as Fn;
  const major: unknown[] = [0];
  const minor: unknown[] = [0];
  f.nvrtcVersion(major, minor);
  const version = `${major[0]}.${minor[0]}`;
  const describe = (code: number) => `${String(f.nvrtcGetErrorString(code))} (${code})`;

  function compile(
    source: string,
    kernel: string,
    arch: string,
    options: readonly string[] = [],
  ): CompileResult {
    const box: unknown[] = [null];
    const created = f.nvrtcCreateProgram(box, source, `${kernel}.cu`, 0, null, null) as number;
    if (created !== NVRTC_SUCCESS) throw new NvrtcError(kernel, arch, describe(created), '');
    const program = outPointer(box);
    try {
      const opts = compileOptions(arch, options);
      const result = f.nvrtcCompileProgram(program, opts.length, opts) as number;
      const log = readBytes(f.nvrtcGetProgramLogSize, f.nvrtcGetProgramLog, program);
      const logText = Buffer.from(log).toString('utf8').replace(/\0+$/, '').trim();
      if (result !== NVRTC_SUCCESS) throw new NvrtcError(kernel, arch, describe(result), logText);
      const cubin = arch.startsWith('sm_');
      const image = cubin
        ? readBytes(f.nvrtcGetCUBINSize, f.nvrtcGetCUBIN, program)
        : readBytes(f.nvrtcGetPTXSize, f.nvrtcGetPTX, program);
      return { image, log: logText };
    } finally {
      f.nvrtcDestroyProgram([program]);
    }
  }

  return { path, version, compile };
}

/**
 * NVRTC dlopens libnvrtc-builtins by soname at compile time; outside the loader's path (Python wheels,
 * an unregistered toolkit) that fails. Loading it first from NVRTC's own folder makes the soname resolve.
 */
function preloadBuiltins(koffi: KoffiModule, nvrtcPath: string): void {
  if (!nvrtcPath.includes('/')) return;
  const dir = dirname(nvrtcPath);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => /^libnvrtc-builtins\.so(\.\d+)*$/.test(n));
  } catch {
    return;
  }
  names.sort((a, b) => b.length - a.length);
  for (const n of names) {
    try {
      koffi.load(join(dir, n));
      return;
    } catch {
      // A mismatched builtins file: leave it to NVRTC's own error, which names what it wanted.
    }
  }
}

function readBytes(sizeFn: Fn, readFn: Fn, program: bigint): Uint8Array {
  const size: unknown[] = [0];
  const code = sizeFn(program, size) as number;
  if (code !== NVRTC_SUCCESS) throw new Error(`cuda: NVRTC could not report an output size (${code})`);
  const out = new Uint8Array(Number(size[0]));
  if (out.length > 0) {
    const read = readFn(program, out) as number;
    if (read !== NVRTC_SUCCESS) throw new Error(`cuda: NVRTC could not copy an output (${read})`);
  }
  return out;
}
