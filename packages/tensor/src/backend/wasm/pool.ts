/**
 * Runs a kernel's calls on the main thread and on worker threads that share the wasm memory. The kernel
 * interface is synchronous, so the main thread takes its own share of the calls and then blocks on
 * `Atomics.wait` until every participating worker has signalled done (a busy-wait where the engine forbids
 * blocking, as on a browser's main thread). Only standard JavaScript is used here; starting threads is the
 * job of a `ThreadHost` (./node-host.ts for Node, ./web-host.ts for browsers).
 *
 * Workers start lazily, on the first job after `ensureStarted`, and are used once they report ready:
 * until then the main thread runs everything, so no call ever waits for a thread to boot.
 */
import { CONTROL, CONTROL_BYTES } from './protocol.js';
import { WORKER_MAIN } from './worker-source.js';

/** Starts threads running a classic script; see ./node-host.ts. */
export interface ThreadHost {
  /** The machine's hardware threads (the default thread count). */
  readonly hardwareThreads: number;
  /** Starts a thread that runs `mainSource` (which defines `main(data)`) and calls `main(data)`. */
  spawn(mainSource: string, data: unknown): { terminate(): void };
}

/** One call: an export's index in the pool's name list, then its arguments (numbers). */
export type Call = number[];

interface WorkerHandle {
  terminate(): void;
}

export class WorkerPool {
  private readonly ctl: Int32Array;
  private readonly table: Float64Array;
  private readonly control: SharedArrayBuffer;
  private workers: WorkerHandle[] = [];
  private seq = 0;
  /** Jobs that ran on at least one worker besides the main thread. */
  sharedJobs = 0;
  /**
   * Milliseconds the main thread spent blocked on workers after finishing its own share, summed over jobs:
   * near zero on a quiet machine; on a busy one, the time a woken worker waits for a core (a diagnostic).
   */
  waitMs = 0;
  /** Workers' shares the main thread took back and ran itself because the worker had not started them. */
  takenBack = 0;

  /**
   * @param size number of worker threads (the main thread is one more lane)
   * @param run runs one call on the main thread's own instance
   */
  constructor(
    private readonly host: ThreadHost,
    readonly size: number,
    private readonly module: object,
    private readonly memory: object,
    private readonly names: readonly string[],
    private readonly run: (call: Call) => void,
  ) {
    if (size > CONTROL.maxWorkers) throw new Error(`WorkerPool: at most ${CONTROL.maxWorkers} workers`);
    this.control = new SharedArrayBuffer(CONTROL_BYTES);
    this.ctl = new Int32Array(this.control);
    this.table = new Float64Array(this.control, CONTROL.tableOffset);
  }

  get started(): boolean {
    return this.workers.length > 0;
  }

  /** Starts the workers if they are not running; returns at once (they report ready later). */
  ensureStarted(): void {
    if (this.started || this.size === 0) return;
    for (let index = 0; index < this.size; index++)
      this.workers.push(
        this.host.spawn(WORKER_MAIN, {
          module: this.module,
          memory: this.memory,
          control: this.control,
          names: this.names,
          index,
          layout: CONTROL,
        }),
      );
  }

  private slot(w: number): number {
    return CONTROL.slot0 + w * CONTROL.slotInts;
  }

  /** Indices of the workers that have reported ready. */
  readyWorkers(): number[] {
    const ready: number[] = [];
    for (let w = 0; w < this.workers.length; w++)
      if (Atomics.load(this.ctl, this.slot(w) + CONTROL.ready) === 1) ready.push(w);
    return ready;
  }

  /** Blocks until every worker is ready or `timeoutMs` passes; returns how many are ready. */
  waitReady(timeoutMs: number): number {
    this.ensureStarted();
    const deadline = performance.now() + timeoutMs;
    for (let w = 0; w < this.workers.length; w++) {
      const i = this.slot(w) + CONTROL.ready;
      while (Atomics.load(this.ctl, i) !== 1) {
        const left = deadline - performance.now();
        if (left <= 0) return this.readyWorkers().length;
        blockOn(this.ctl, i, 0, left);
      }
    }
    return this.workers.length;
  }

  /**
   * Runs `calls` split into contiguous ranges over the main thread and the ready workers, and returns when
   * all are done. A failure on any thread throws an error naming `kernel`, after every thread has stopped.
   */
  dispatch(kernel: string, calls: Call[]): void {
    this.ensureStarted();
    const ready = this.readyWorkers();
    if (ready.length === 0 || calls.length < 2) {
      this.runHere(kernel, calls, 0, calls.length);
      return;
    }
    for (let base = 0; base < calls.length; base += CONTROL.maxCalls)
      this.dispatchBatch(kernel, calls.slice(base, base + CONTROL.maxCalls), ready);
  }

  private dispatchBatch(kernel: string, calls: Call[], ready: number[]): void {
    const n = calls.length;
    for (let c = 0; c < n; c++) {
      const call = calls[c];
      const row = c * CONTROL.row;
      for (let k = 0; k < CONTROL.row; k++) this.table[row + k] = k < call.length ? call[k] : 0;
    }
    const lanes = Math.min(ready.length + 1, n);
    const bound = (lane: number) => shareStart(lane, n, lanes);
    const seq = ++this.seq;
    const used = ready.slice(0, lanes - 1);
    this.sharedJobs++;
    used.forEach((w, k) => {
      const s = this.slot(w);
      this.ctl[s + CONTROL.start] = bound(k + 1);
      this.ctl[s + CONTROL.end] = bound(k + 2);
      this.ctl[s + CONTROL.status] = 0;
      Atomics.store(this.ctl, s + CONTROL.assigned, seq);
    });
    Atomics.store(this.ctl, CONTROL.seq, seq);
    Atomics.notify(this.ctl, CONTROL.seq);
    let own: unknown;
    try {
      for (let c = 0; c < bound(1); c++) this.run(calls[c]);
    } catch (error) {
      own = error;
    }
    const failures: string[] = [];
    for (const [k, w] of used.entries()) {
      // A share its worker has not started yet (not woken, or waiting for a core on a busy machine) is
      // taken back and run here: blocking on a thread that is not running cost a scheduler slice per job.
      const claim = this.slot(w) + CONTROL.claim;
      const claimed = Atomics.load(this.ctl, claim);
      if (claimed !== seq && Atomics.compareExchange(this.ctl, claim, claimed, seq) === claimed) {
        this.takenBack++;
        try {
          for (let c = bound(k + 1); c < bound(k + 2); c++) this.run(calls[c]);
        } catch (error) {
          own ??= error;
        }
        continue;
      }
      const i = this.slot(w) + CONTROL.done;
      const waitStart = performance.now();
      for (let done = Atomics.load(this.ctl, i); done !== seq; done = Atomics.load(this.ctl, i))
        blockOn(this.ctl, i, done, Number.POSITIVE_INFINITY);
      this.waitMs += performance.now() - waitStart;
      if (this.ctl[this.slot(w) + CONTROL.status] !== 0) failures.push(`worker ${w}: ${this.message(w)}`);
    }
    if (own !== undefined) failures.unshift(`main thread: ${own instanceof Error ? own.message : own}`);
    if (failures.length > 0) throw new Error(`wasm kernel '${kernel}' failed (${failures.join('; ')})`);
  }

  private runHere(kernel: string, calls: Call[], from: number, to: number): void {
    try {
      for (let c = from; c < to; c++) this.run(calls[c]);
    } catch (error) {
      throw new Error(
        `wasm kernel '${kernel}' failed (main thread: ${error instanceof Error ? error.message : error})`,
      );
    }
  }

  private message(w: number): string {
    const bytes = new Uint8Array(this.control, CONTROL.msgOffset + w * CONTROL.msgBytes, CONTROL.msgBytes);
    const end = bytes.indexOf(0);
    return new TextDecoder().decode(bytes.slice(0, end < 0 ? bytes.length : end));
  }

  /** Stops and terminates the workers. The pool is then spent: the runtime makes a new one if needed. */
  shutdown(): void {
    Atomics.store(this.ctl, CONTROL.stop, 1);
    Atomics.add(this.ctl, CONTROL.seq, 1);
    Atomics.notify(this.ctl, CONTROL.seq);
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }
}

/**
 * The first of `calls` calls that thread `lane` of `lanes` runs (lane 0 is the main thread): each runs a
 * contiguous range, up to the next lane's start (`calls` for the last lane).
 */
export function shareStart(lane: number, calls: number, lanes: number): number {
  return Math.floor((lane * calls) / lanes);
}

let canBlock: boolean | undefined;

/** Atomics.wait where allowed (Node's main thread, workers); otherwise spins until the value changes. */
function blockOn(ctl: Int32Array, index: number, value: number, timeoutMs: number): void {
  if (canBlock !== false) {
    try {
      Atomics.wait(ctl, index, value, timeoutMs);
      canBlock = true;
      return;
    } catch {
      canBlock = false;
    }
  }
  const deadline = performance.now() + timeoutMs;
  while (Atomics.load(ctl, index) === value && performance.now() < deadline) {}
}
