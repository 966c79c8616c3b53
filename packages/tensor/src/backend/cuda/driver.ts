/**
 * The CUDA driver API through koffi: only the entry points this backend calls, each checked. A failing call
 * throws a CudaError naming the call and the driver's own error name and text (cuGetErrorName/String).
 * Pointers (contexts, streams, modules, functions, device memory) are BigInts.
 */
import { type KoffiModule, loadKoffi, outPointer } from './ffi.js';
import { loadLibrary, type SearchEnv, systemSearchEnv } from './libs.js';

export const CUDA_SUCCESS = 0;
export const CUDA_ERROR_OUT_OF_MEMORY = 2;
export const CUDA_ERROR_NOT_READY = 600;
export const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
export const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
export const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

export class CudaError extends Error {
  constructor(
    readonly call: string,
    readonly code: number,
    readonly errorName: string,
    detail: string,
  ) {
    super(`cuda: ${call} failed: ${errorName} (${code}): ${detail}`);
    this.name = 'CudaError';
  }
}

type Fn = (...args: unknown[]) => number;

export const DRIVER_PROTOTYPES = {
  cuInit: 'int cuInit(unsigned int flags)',
  cuDriverGetVersion: 'int cuDriverGetVersion(_Out_ int *version)',
  cuDeviceGetCount: 'int cuDeviceGetCount(_Out_ int *count)',
  cuDeviceGet: 'int cuDeviceGet(_Out_ int *device, int ordinal)',
  cuDeviceGetAttribute: 'int cuDeviceGetAttribute(_Out_ int *value, int attribute, int device)',
  cuDeviceGetName: 'int cuDeviceGetName(uint8_t *name, int length, int device)',
  cuDeviceTotalMem: 'int cuDeviceTotalMem_v2(_Out_ size_t *bytes, int device)',
  cuDevicePrimaryCtxRetain: 'int cuDevicePrimaryCtxRetain(_Out_ void **context, int device)',
  cuCtxSetCurrent: 'int cuCtxSetCurrent(void *context)',
  cuStreamCreate: 'int cuStreamCreate(_Out_ void **stream, unsigned int flags)',
  cuStreamSynchronize: 'int cuStreamSynchronize(void *stream)',
  cuEventCreate: 'int cuEventCreate(_Out_ void **event, unsigned int flags)',
  cuEventRecord: 'int cuEventRecord(void *event, void *stream)',
  cuEventQuery: 'int cuEventQuery(void *event)',
  cuEventSynchronize: 'int cuEventSynchronize(void *event)',
  cuEventElapsedTime: 'int cuEventElapsedTime(_Out_ float *ms, void *start, void *end)',
  cuMemAlloc: 'int cuMemAlloc_v2(_Out_ uint64_t *dptr, size_t bytes)',
  cuMemFree: 'int cuMemFree_v2(uint64_t dptr)',
  cuMemGetInfo: 'int cuMemGetInfo_v2(_Out_ size_t *free, _Out_ size_t *total)',
  cuMemcpyHtoDAsync: 'int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes, void *stream)',
  cuMemcpyDtoHAsync: 'int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes, void *stream)',
  cuMemcpyDtoDAsync: 'int cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes, void *stream)',
  cuMemsetD8Async: 'int cuMemsetD8Async(uint64_t dst, uint8_t value, size_t count, void *stream)',
  cuModuleLoadData: 'int cuModuleLoadData(_Out_ void **module, const void *image)',
  cuModuleGetFunction: 'int cuModuleGetFunction(_Out_ void **fn, void *module, const char *name)',
  cuLaunchKernel:
    'int cuLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedBytes, void *stream, void *params, void *extra)',
  cuGetErrorName: 'int cuGetErrorName(int error, _Out_ const char **name)',
  cuGetErrorString: 'int cuGetErrorString(int error, _Out_ const char **text)',
} as const;

export type DriverCall = keyof typeof DRIVER_PROTOTYPES;

export interface Driver {
  readonly path: string;
  readonly koffi: KoffiModule;
  /** The raw functions; most callers want `check`. */
  readonly raw: Record<DriverCall, Fn>;
  /** Calls `name` and throws a CudaError unless it returns CUDA_SUCCESS. */
  check(name: DriverCall, ...args: unknown[]): void;
  /** Turns a result code into a CudaError (for calls whose non-success codes are sometimes expected). */
  error(name: string, code: number): CudaError;
}

export async function loadDriver(search: SearchEnv = systemSearchEnv()): Promise<Driver> {
  const koffi = await loadKoffi();
  const { lib, path } = loadLibrary('cuda', (p) => koffi.load(p), search);
  const raw = {} as Record<DriverCall, Fn>;
  for (const [name, proto] of Object.entries(DRIVER_PROTOTYPES))
    raw[name as DriverCall] = lib.func(proto) as Fn;
  const error = (name: string, code: number): CudaError => {
    const n: unknown[] = [null];
    const t: unknown[] = [null];
    const known = raw.cuGetErrorName(code, n) === CUDA_SUCCESS;
    raw.cuGetErrorString(code, t);
    return new CudaError(
      name,
      code,
      known ? String(n[0]) : 'unknown error',
      t[0] ? String(t[0]) : 'no description',
    );
  };
  return {
    path,
    koffi,
    raw,
    error,
    check(name, ...args) {
      const code = raw[name](...args);
      if (code !== CUDA_SUCCESS) throw error(name, code);
    },
  };
}

/** Reads an `_Out_` pointer result of a checked call. */
export function callForPointer(driver: Driver, name: DriverCall, ...args: unknown[]): bigint {
  const box: unknown[] = [null];
  driver.check(name, box, ...args);
  return outPointer(box);
}

export function callForNumber(driver: Driver, name: DriverCall, ...args: unknown[]): number {
  const box: unknown[] = [0];
  driver.check(name, box, ...args);
  return Number(box[0]);
}
