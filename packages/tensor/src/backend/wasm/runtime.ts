/**
 * The one instance of the kernel module, its memory, and the threads that share it. The memory is a heap of
 * blocks (./heap.ts): the scratch block where kernels copy operands that live elsewhere, and, where the
 * memory is shared, the float32 tensors of the CPU backend themselves (./arena.ts), which kernels then read
 * and write in place. The heap grows the memory as needed. Large jobs go
 * through `parallel`, which splits a list of calls over the main thread and the worker pool (./pool.ts);
 * small ones call the exports directly. Only the standard WebAssembly and Atomics APIs are used here (no
 * Node APIs), so this runs in browsers too; threads need a `ThreadHost` and SharedArrayBuffer.
 */
import { type CallCheck, runCallsChecked } from './call-check.js';
import { BlockHeap } from './heap.js';
import { MAX_PAGES, buildKernelModule } from './kernels.js';
import { nodeThreadHost } from './node-host.js';
import { type Call, type ThreadHost, WorkerPool } from './pool.js';
import { CONTROL } from './protocol.js';
import { webWorkerHost } from './web-host.js';

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
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

/** A module whose one function is `f32x4.relaxed_madd` of its three v128 parameters: valid only with relaxed SIMD. */
const RELAXED_SIMD_PROBE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02,
  0x0b,
]);

let relaxedSupported: boolean | undefined;
let relaxedWanted: boolean | undefined;

/**
 * Whether this engine has relaxed SIMD (Node ≥ 22 and Chromium by default; Node 20 with
 * `--experimental-wasm-relaxed-simd`).
 */
export function wasmRelaxedSimdSupported(): boolean {
  if (relaxedSupported === undefined) {
    try {
      relaxedSupported = wasmApi()?.validate(RELAXED_SIMD_PROBE) === true;
    } catch {
      relaxedSupported = false;
    }
  }
  return relaxedSupported;
}

/**
 * Chooses whether the kernels use relaxed SIMD where the engine has it (the default; the environment
 * variable AGENT_R1_RELAXED_SIMD=0 turns it off too). The kernel module is built once, on first use, so
 * this must come before any wasm kernel runs; later it is an error.
 */
export function setWasmRelaxedSimd(on: boolean): void {
  if (runtime && on !== runtime.relaxedSimd)
    throw new Error(
      'setWasmRelaxedSimd: the wasm kernels are already built; choose before the first kernel runs',
    );
  relaxedWanted = on;
}

function useRelaxedSimd(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const wanted = relaxedWanted ?? env?.AGENT_R1_RELAXED_SIMD !== '0';
  return wanted && wasmRelaxedSimdSupported();
}

// biome-ignore lint/suspicious/noExplicitAny: wasm exports take and return plain numbers.
type Export = (...args: any[]) => void;

export interface WasmRuntime {
  /** The main thread's exports by name. */
  readonly fn: Record<string, Export>;
  /** Index of an export in the call table (for `parallel`). */
  id(name: string): number;
  /**
   * A scratch region of at least `bytes` bytes for one kernel call: its byte address, and a Float32Array
   * over the whole memory (valid until the heap next grows the memory: take `view()` again after a call).
   */
  scratch(bytes: number): { base: number; mem: Float32Array };
  /** A Float32Array over the whole memory as it is now. */
  view(): Float32Array;
  /** The byte address of `data` in this memory, or undefined when it lives elsewhere. */
  addressOf(data: ArrayBufferView): number | undefined;
  /** The heap that scratch and resident tensors come from; `shared` says whether tensors may live in it. */
  readonly heap: BlockHeap;
  readonly shared: boolean;
  /** Whether the module's matmul uses relaxed SIMD multiply-adds (`setWasmRelaxedSimd`). */
  readonly relaxedSimd: boolean;
  /**
   * How many threads a job of about `work` elementary operations should be split over: 1 when it is small
   * (threads cost ~10 µs a job) or no worker is ready yet; starts the workers lazily otherwise.
   */
  lanes(work: number): number;
  /**
   * Runs the calls (export id, then arguments), split over the ready threads, or all on this thread when
   * `lanes` (what `lanes(work)` said for the job) is 1; errors name `kernel`.
   */
  parallel(kernel: string, calls: Call[], lanes?: number): void;
}

const PAGE = 65536;
/** Below this many elementary operations a job stays on the main thread. */
const PARALLEL_WORK = 1 << 17;

let runtime: WasmRuntime | undefined;
let host: ThreadHost | undefined | null = null;
let threads: number | undefined;
let pool: WorkerPool | undefined;
let callCheck: CallCheck = 'off';
let poisonScratch = false;

function threadHost(): ThreadHost | undefined {
  if (host === null) host = nodeThreadHost() ?? webWorkerHost();
  return host;
}

/**
 * Replaces the thread host (default: worker_threads in Node, Web Workers in a cross-origin-isolated page);
 * undefined disables threads, null goes back to the default.
 */
export function setThreadHost(next: ThreadHost | undefined | null): void {
  shutdownWorkers();
  host = next;
}

/** The default thread count: the machine's hardware threads, capped at 8 (memory bandwidth saturates). */
export function defaultThreads(): number {
  return Math.max(1, Math.min(8, threadHost()?.hardwareThreads ?? 1, CONTROL.maxWorkers + 1));
}

/** Sets how many threads (the main one included) large kernels use; workers restart lazily. */
export function setThreads(n: number | undefined): void {
  if (n !== undefined && !(Number.isInteger(n) && n >= 1 && n <= CONTROL.maxWorkers + 1))
    throw new Error(`wasm kernels: threads must be an integer in [1, ${CONTROL.maxWorkers + 1}], got ${n}`);
  if (n === threads) return;
  shutdownWorkers();
  threads = n;
}

export function getThreads(): number {
  return threads ?? defaultThreads();
}

/** Terminates the worker threads (they start again on the next large kernel). */
export function shutdownWorkers(): void {
  pool?.shutdown();
  pool = undefined;
}

/**
 * Whether the bytes of the scratch block a kernel call asks for are filled with NaN each time (./arena.ts's
 * `poisonBlocks` turns this on with the blocks): a kernel that read scratch it had not written, such as a
 * packed panel's padding, would then turn its results NaN instead of reading what an earlier call left.
 */
export function setScratchPoison(on: boolean): void {
  poisonScratch = on;
}

/**
 * Runs every job's calls one after another on the calling thread, in reverse order or checking that the
 * shares of different threads write disjoint memory (./call-check.ts); 'off' (the default) goes back to the
 * threads.
 */
export function setCallCheck(mode: CallCheck): void {
  callCheck = mode;
}

/** Blocks until the workers are running (starting them if needed); returns how many are ready. */
export function waitForWorkers(timeoutMs = 10000): number {
  getWasmRuntime();
  return currentPool()?.waitReady(timeoutMs) ?? 0;
}

/**
 * Worker counts, how many jobs the current pool shared with its workers, how long the main thread waited
 * for them after its own share (milliseconds, summed), and how many workers' shares it took back and ran
 * itself because their worker had not started them (for tests and benchmarks).
 */
export function workerInfo(): {
  threads: number;
  started: boolean;
  ready: number;
  sharedJobs: number;
  waitMs: number;
  takenBack: number;
} {
  return {
    threads: getThreads(),
    started: pool?.started ?? false,
    ready: pool?.readyWorkers().length ?? 0,
    sharedJobs: pool?.sharedJobs ?? 0,
    waitMs: pool?.waitMs ?? 0,
    takenBack: pool?.takenBack ?? 0,
  };
}

/**
 * The wasm memory's size, and of it the bytes held by tensors and scratch (`inUse`), the top of the used
 * region, and the number of free ranges below it (fragmentation); zeros before the runtime starts.
 */
export function memoryInfo(): { bytes: number; inUse: number; top: number; freeRanges: number } {
  if (!runtime) return { bytes: 0, inUse: 0, top: 0, freeRanges: 0 };
  return { bytes: runtime.view().byteLength, ...runtime.heap.stats() };
}

let shared: { module: object; memory: WasmMemory; names: string[]; run: (call: Call) => void } | undefined;

function currentPool(): WorkerPool | undefined {
  const n = getThreads() - 1;
  const h = threadHost();
  if (n < 1 || !h || !shared) return undefined;
  if (!pool) pool = new WorkerPool(h, n, shared.module, shared.memory, shared.names, shared.run);
  return pool;
}

/** A shared memory where the engine allows one (not in a browser page without cross-origin isolation). */
function createMemory(api: WasmApi): { memory: WasmMemory; isShared: boolean } {
  if (typeof SharedArrayBuffer !== 'undefined') {
    try {
      return { memory: new api.Memory({ initial: 16, maximum: MAX_PAGES, shared: true }), isShared: true };
    } catch {
      // fall through to a private memory
    }
  }
  return { memory: new api.Memory({ initial: 16 }), isShared: false };
}

/** The shared runtime, instantiated on first use. Throws where WebAssembly SIMD is unavailable. */
export function getWasmRuntime(): WasmRuntime {
  if (runtime) return runtime;
  const api = wasmApi();
  if (!api || !wasmSimdSupported()) throw new Error('WebAssembly SIMD is not supported by this engine');
  const { memory, isShared } = createMemory(api);
  const relaxedSimd = useRelaxedSimd();
  const module = new api.Module(buildKernelModule(isShared, relaxedSimd));
  const instance = new api.Instance(module, { env: { memory, log: Math.log } });
  const fn = instance.exports as Record<string, Export>;
  const names = Object.keys(fn);
  const ids = new Map(names.map((n, i) => [n, i]));
  const table = names.map((n) => fn[n]);
  const run = (call: Call) =>
    table[call[0]](
      call[1],
      call[2],
      call[3],
      call[4],
      call[5],
      call[6],
      call[7],
      call[8],
      call[9],
      call[10],
      call[11],
      call[12],
      call[13],
    );
  if (isShared) shared = { module, memory, names, run };
  let view = new Float32Array(memory.buffer);
  // Every ArrayBuffer object that has stood for this memory (growing a shared memory makes a new one over the
  // same bytes; older views stay valid), so any typed array over the memory is recognised as such.
  const buffers = new WeakSet<ArrayBufferLike>([memory.buffer]);
  const refresh = (): Float32Array => {
    if (view.buffer !== memory.buffer || view.byteLength !== memory.buffer.byteLength) {
      view = new Float32Array(memory.buffer);
      buffers.add(memory.buffer);
    }
    return view;
  };
  const heap = new BlockHeap(64, MAX_PAGES * PAGE, (end) => {
    const have = memory.buffer.byteLength;
    if (end <= have) return true;
    try {
      memory.grow(Math.ceil((end - have) / PAGE));
    } catch {
      return false;
    }
    refresh();
    return true;
  });
  let scratch = { base: 0, bytes: 0 };
  runtime = {
    heap,
    shared: isShared,
    relaxedSimd,
    fn,
    id(name: string): number {
      const i = ids.get(name);
      if (i === undefined) throw new Error(`wasm kernels: no export named '${name}'`);
      return i;
    },
    scratch(bytes: number): { base: number; mem: Float32Array } {
      if (bytes > scratch.bytes) {
        // Grown by half again each time, so a run settles on one block after its largest kernel call.
        const want = Math.max(bytes, Math.floor(scratch.bytes * 1.5), 1 << 16);
        if (scratch.bytes > 0) heap.release(scratch.base, scratch.bytes);
        const block = heap.alloc(want) ?? heap.alloc(bytes);
        if (!block) {
          scratch = { base: 0, bytes: 0 };
          throw new Error(
            `wasm kernels: no room for ${bytes} bytes of scratch (the wasm memory holds at most ${MAX_PAGES * PAGE} bytes)`,
          );
        }
        scratch = { base: block.address, bytes: block.bytes };
      }
      const mem = refresh();
      if (poisonScratch) mem.fill(Number.NaN, scratch.base / 4, (scratch.base + bytes) / 4);
      return { base: scratch.base, mem };
    },
    view: refresh,
    addressOf(data: ArrayBufferView): number | undefined {
      return buffers.has(data.buffer) ? data.byteOffset : undefined;
    },
    lanes(work: number): number {
      if (work < PARALLEL_WORK) return 1;
      const p = currentPool();
      if (!p) return 1;
      p.ensureStarted();
      return 1 + p.readyWorkers().length;
    },
    parallel(kernel: string, calls: Call[], lanes?: number): void {
      // A call row holds the export index and at most CONTROL.row − 1 arguments; more would be dropped.
      if (calls.some((call) => call.length > CONTROL.row))
        throw new Error(`wasm kernel '${kernel}': a call passes more than ${CONTROL.row - 1} arguments`);
      const runHere = (call: Call) => {
        try {
          run(call);
        } catch (error) {
          throw new Error(
            `wasm kernel '${kernel}' failed (main thread: ${error instanceof Error ? error.message : error})`,
          );
        }
      };
      if (callCheck !== 'off' && calls.length > 1) {
        const top = heap.stats().top;
        runCallsChecked(
          callCheck,
          kernel,
          calls,
          getThreads(),
          runHere,
          () => new Int32Array(refresh().buffer, 0, top / 4),
        );
        return;
      }
      // Only `lanes` starts the workers (for large jobs); a small job runs here even if it has several calls
      // and the workers are running: handing it over costs more than it saves (a decode step's matmuls and
      // attention were each a round trip to a worker, and on a busy machine each waited for a core).
      const p = currentPool();
      if (p?.started && calls.length > 1 && lanes !== 1) p.dispatch(kernel, calls);
      else for (const call of calls) runHere(call);
    },
  };
  return runtime;
}

/** Whether the wasm kernels use relaxed SIMD (as built, or as they will be built on first use). */
export function wasmRelaxedSimdActive(): boolean {
  return runtime ? runtime.relaxedSimd : useRelaxedSimd();
}
