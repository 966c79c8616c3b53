/**
 * One device, one context, one stream: what kernels are launched on. Owns the driver and NVRTC handles,
 * the kernel cache (compile on first use, then memory/disk), the caching allocator, the device error word
 * that kernels raise on bad indices, and the non-blocking wait used by read() and sync() (an event polled
 * from the event loop, so awaiting the GPU never blocks Node).
 */
import { type KernelArg, packArgs } from './args.js';
import { type Block, CachingAllocator } from './allocator.js';
import { type Cublas, type GemmPointers, loadCublas } from './cublas.js';
import {
  CUDA_ERROR_NOT_READY,
  CUDA_ERROR_OUT_OF_MEMORY,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
  CudaError,
  type Driver,
  callForNumber,
  callForPointer,
  loadDriver,
} from './driver.js';
import type { GemmPlan } from './gemm-plan.js';
import type { KernelSource } from './kernels/common.js';
import type { Launcher } from './launcher.js';
import { LibraryNotFoundError } from './libs.js';
import { DEVICE_ERRORS } from './kernels/indexing.js';
import { ImageCache, cacheDir } from './modules.js';
import { type Nvrtc, compileOptions, loadNvrtc } from './nvrtc.js';

const PARAM_BUFFER_BYTES = 4096;
const CU_LAUNCH_PARAM_END = 0n;
const CU_LAUNCH_PARAM_BUFFER_POINTER = 1n;
const CU_LAUNCH_PARAM_BUFFER_SIZE = 2n;

export interface DeviceInfo {
  ordinal: number;
  name: string;
  arch: string;
  multiprocessors: number;
  totalBytes: number;
  driverVersion: number;
  nvrtcVersion: string;
  libcuda: string;
  libnvrtc: string;
  /** The cuBLAS library matmuls go through, or null where they use this backend's own kernel. */
  libcublas: string | null;
}

/**
 * Which matmul implementation to use: 'auto' (cuBLAS where libcublas is found, else the kernels),
 * 'cublas' (and an error naming what is missing without it) or 'kernels' (this backend's own).
 */
export type MatmulImpl = 'auto' | 'cublas' | 'kernels';

export interface RuntimeOptions {
  matmul?: MatmulImpl;
  /** Let cuBLAS run float32 matmuls on TF32 tensor cores (off by default: results then track the CPU's). */
  tf32?: boolean;
}

export class CudaRuntime implements Launcher {
  readonly allocator: CachingAllocator;
  readonly images: ImageCache;
  readonly errorWord: bigint;
  readonly multiprocessors: number;
  private readonly functions = new Map<string, bigint>();
  private readonly params: DataView;
  private readonly paramPtr: bigint;
  private readonly extra: bigint;
  private readonly sizeCell: DataView;
  private readonly event: bigint;
  readonly gemm?: (plan: GemmPlan, pointers: GemmPointers) => void;

  private constructor(
    readonly driver: Driver,
    readonly nvrtc: Nvrtc,
    readonly info: DeviceInfo,
    readonly stream: bigint,
    readonly cublas: Cublas | null,
  ) {
    if (cublas) this.gemm = (plan, pointers) => cublas.gemm(plan, pointers);
    const k = driver.koffi;
    this.multiprocessors = info.multiprocessors;
    this.images = new ImageCache(
      (src, name, arch) => nvrtc.compile(src, name, arch).image,
      info.arch,
      `nvrtc-${nvrtc.version}`,
      cacheDir(),
      compileOptions(info.arch),
    );
    this.allocator = new CachingAllocator({
      alloc: (bytes) => callForPointer(driver, 'cuMemAlloc', bytes),
      free: (ptr) => driver.check('cuMemFree', ptr),
      drain: () => driver.check('cuStreamSynchronize', stream),
      isOutOfMemory: (e) => e instanceof CudaError && e.code === CUDA_ERROR_OUT_OF_MEMORY,
    });
    // Stable native memory for launch arguments: [args][size_t size] and the five-slot `extra` array.
    this.paramPtr = k.alloc('uint8_t', PARAM_BUFFER_BYTES) as bigint;
    this.params = new DataView(k.view(this.paramPtr, PARAM_BUFFER_BYTES));
    const sizePtr = k.alloc('uint64_t', 1) as bigint;
    this.sizeCell = new DataView(k.view(sizePtr, 8));
    this.extra = k.alloc('uint64_t', 5) as bigint;
    const slots = new DataView(k.view(this.extra, 40));
    [
      CU_LAUNCH_PARAM_BUFFER_POINTER,
      this.paramPtr,
      CU_LAUNCH_PARAM_BUFFER_SIZE,
      sizePtr,
      CU_LAUNCH_PARAM_END,
    ].forEach((v, i) => {
      slots.setBigUint64(8 * i, v, true);
    });
    this.event = callForPointer(driver, 'cuEventCreate', 2 /* CU_EVENT_DISABLE_TIMING */);
    this.errorWord = this.allocator.alloc(4).ptr;
    driver.check('cuMemsetD8Async', this.errorWord, 0, 4, stream);
  }

  static async create(ordinal = 0, options: RuntimeOptions = {}): Promise<CudaRuntime> {
    const driver = await loadDriver();
    driver.check('cuInit', 0);
    const count = callForNumber(driver, 'cuDeviceGetCount');
    if (ordinal >= count) throw new Error(`cuda: device ${ordinal} requested but the driver sees ${count}`);
    const device = callForNumber(driver, 'cuDeviceGet', ordinal);
    const attr = (a: number) => callForNumber(driver, 'cuDeviceGetAttribute', a, device);
    const nameBuf = new Uint8Array(256);
    driver.check('cuDeviceGetName', nameBuf, nameBuf.length, device);
    const nvrtc = await loadNvrtc();
    const ctx = callForPointer(driver, 'cuDevicePrimaryCtxRetain', device);
    driver.check('cuCtxSetCurrent', ctx);
    const stream = callForPointer(driver, 'cuStreamCreate', 1 /* CU_STREAM_NON_BLOCKING */);
    const cublas = await openCublas(stream, options);
    const info: DeviceInfo = {
      ordinal,
      name: Buffer.from(nameBuf).toString('utf8').replace(/\0.*$/s, ''),
      arch: `sm_${attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)}${attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)}`,
      multiprocessors: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
      totalBytes: callForNumber(driver, 'cuDeviceTotalMem', device),
      driverVersion: callForNumber(driver, 'cuDriverGetVersion'),
      nvrtcVersion: nvrtc.version,
      libcuda: driver.path,
      libnvrtc: nvrtc.path,
      libcublas: cublas?.path ?? null,
    };
    return new CudaRuntime(driver, nvrtc, info, stream, cublas);
  }

  /** The CUfunction of a kernel: compiled (or read from disk) and loaded on first use. */
  function(kernel: KernelSource): bigint {
    const known = this.functions.get(kernel.name);
    if (known !== undefined) return known;
    const image = this.images.image(kernel);
    const module = callForPointer(this.driver, 'cuModuleLoadData', image);
    const fn = callForPointer(this.driver, 'cuModuleGetFunction', module, kernel.name);
    this.functions.set(kernel.name, fn);
    return fn;
  }

  launch(kernel: KernelSource, grid: readonly number[], block: number, args: readonly KernelArg[]): void {
    const [gx, gy = 1, gz = 1] = grid;
    if (gx === 0 || gy === 0 || gz === 0) return;
    const fn = this.function(kernel);
    const size = packArgs(args, this.params);
    this.sizeCell.setBigUint64(0, BigInt(size), true);
    const code = this.driver.raw.cuLaunchKernel(
      fn,
      gx,
      gy,
      gz,
      block,
      1,
      1,
      0,
      this.stream,
      null,
      this.extra,
    );
    if (code !== 0) {
      const e = this.driver.error('cuLaunchKernel', code);
      e.message += ` (kernel ${kernel.name}, grid [${gx}, ${gy}, ${gz}], block ${block})`;
      throw e;
    }
  }

  scratch(bytes: number): Block {
    return this.allocator.alloc(bytes);
  }

  release(block: Block): void {
    this.allocator.free(block);
  }

  zero(ptr: bigint, bytes: number): void {
    if (bytes > 0) this.driver.check('cuMemsetD8Async', ptr, 0, bytes, this.stream);
  }

  upload(ptr: bigint, data: ArrayBufferView): void {
    if (data.byteLength > 0) this.driver.check('cuMemcpyHtoDAsync', ptr, data, data.byteLength, this.stream);
  }

  /** Copies device memory into `out` once queued work is done (awaits without blocking the event loop). */
  async download(ptr: bigint, out: ArrayBufferView): Promise<void> {
    await this.idle();
    if (out.byteLength > 0) this.driver.check('cuMemcpyDtoHAsync', out, ptr, out.byteLength, this.stream);
  }

  /** Copies device memory into `out`, blocking the thread until queued work is done. */
  downloadSync(ptr: bigint, out: ArrayBufferView): void {
    this.synchronize();
    if (out.byteLength > 0) this.driver.check('cuMemcpyDtoHAsync', out, ptr, out.byteLength, this.stream);
  }

  /** Resolves when every queued launch and copy has finished; throws a kernel-reported error. */
  async idle(): Promise<void> {
    this.driver.check('cuEventRecord', this.event, this.stream);
    for (let spin = 0; ; spin++) {
      const code = this.driver.raw.cuEventQuery(this.event);
      if (code === 0) break;
      if (code !== CUDA_ERROR_NOT_READY) throw this.driver.error('cuEventQuery', code);
      await new Promise((resolve) => (spin < 64 ? setImmediate(resolve) : setTimeout(resolve, 1)));
    }
    this.raiseDeviceError();
  }

  /** Blocks the thread until the stream is idle (for benchmarks and the allocator's out-of-memory path). */
  synchronize(): void {
    this.driver.check('cuStreamSynchronize', this.stream);
    this.raiseDeviceError();
  }

  private raiseDeviceError(): void {
    const word = new Int32Array(1);
    this.driver.check('cuMemcpyDtoHAsync', word, this.errorWord, 4, this.stream);
    if (word[0] === 0) return;
    this.driver.check('cuMemsetD8Async', this.errorWord, 0, 4, this.stream);
    const message = DEVICE_ERRORS[word[0] as keyof typeof DEVICE_ERRORS] ?? `device error code ${word[0]}`;
    throw new Error(`cuda ${message} (raised by a kernel queued before this read or sync)`);
  }

  memoryInfo(): { free: number; total: number } {
    const free: unknown[] = [0];
    const total: unknown[] = [0];
    this.driver.check('cuMemGetInfo', free, total);
    return { free: Number(free[0]), total: Number(total[0]) };
  }
}

/** cuBLAS on `stream` as `options.matmul` asks: null for 'kernels', or for 'auto' where it is not found. */
async function openCublas(stream: bigint, options: RuntimeOptions): Promise<Cublas | null> {
  const matmul = options.matmul ?? 'auto';
  if (matmul === 'kernels') return null;
  try {
    return await loadCublas({ stream, tf32: options.tf32 });
  } catch (e) {
    if (matmul === 'auto' && e instanceof LibraryNotFoundError) return null;
    throw e;
  }
}
