/**
 * A trace of every kernel call a backend makes: for each call, its operands' shapes and a hash of each
 * operand's elements before and after the call. Two runs that should be identical (the same seed on one
 * and on two threads, before and after a refactor) can then be compared call by call: `firstDivergence`
 * names the first call whose results differ, and says whether that call's inputs were already different
 * (the cause is earlier) or the same (this call computed something else from the same inputs).
 *
 * Tracing wraps the backend's kernel table in place, so kernels registered while it runs (the wasm kernels,
 * say) are traced too, and `stop()` leaves the table as it would be without it. Reading operands needs a
 * synchronous read: the CPU backend (no copy) and CUDA (a blocking download per operand) have one, WebGPU
 * does not. Hashing reads every operand twice a call: a debugging tool, a few times slower than the run.
 */
import type { Backend, View } from '../backend/backend.js';
import { forEachRun } from '../backend/cpu/strided.js';
import { dataOf } from '../backend/cpu/storage.js';
import { getBackend } from '../backend/registry.js';
import type { TypedArray } from '../dtype.js';

export interface TracedOperand {
  /** The argument's position, or its key in an argument object (`q`, `dout`, …). */
  name: string;
  shape: number[];
  /** Hashes of the operand's elements, in row-major order, before and after the call. */
  before: string;
  after: string;
}

export interface TracedCall {
  /** The call's index since tracing started. */
  seq: number;
  kernel: string;
  /** The op of a unary/binary/reduce kernel (`add`, `exp`, `sum`), else undefined. */
  op?: string;
  operands: TracedOperand[];
}

export interface KernelTrace {
  /** Calls traced so far. */
  readonly calls: number;
  /** Puts the kernels back as they are now, untraced. */
  stop(): void;
}

const tracing = new Set<string>();

/** Throws, naming the backend, where its kernels cannot be traced (it has no synchronous read). */
export function assertTraceable(device = 'cpu'): Backend {
  const backend = getBackend(device);
  if (!backend.readSync && backend.name !== 'cpu')
    throw new Error(
      `traceKernels: the ${device} backend cannot read its tensors synchronously; trace on cpu or cuda`,
    );
  return backend;
}

/** Traces every kernel call of `device` (default 'cpu') until `stop()`, handing each to `onCall`. */
export function traceKernels(onCall: (call: TracedCall) => void, device = 'cpu'): KernelTrace {
  const backend = assertTraceable(device);
  if (tracing.has(device)) throw new Error(`traceKernels: the ${device} backend is already being traced`);
  tracing.add(device);
  const table = backend.kernels as unknown as Record<string, (...args: unknown[]) => unknown>;
  const impls = new Map(Object.entries(table));
  let seq = 0;
  for (const name of impls.keys()) {
    const traced = (...args: unknown[]) => {
      const impl = impls.get(name) as (...a: unknown[]) => unknown;
      const operands = viewsOf(args);
      const before = operands.map(([, v]) => hashView(backend, v));
      const result = impl(...args);
      onCall({
        seq: seq++,
        kernel: name,
        op: typeof args[0] === 'string' ? args[0] : undefined,
        operands: operands.map(([key, v], i) => ({
          name: key,
          shape: [...v.shape],
          before: before[i],
          after: hashView(backend, v),
        })),
      });
      return result;
    };
    Object.defineProperty(table, name, {
      get: () => traced,
      set: (next: (...a: unknown[]) => unknown) => impls.set(name, next),
      configurable: true,
      enumerable: true,
    });
  }
  let stopped = false;
  return {
    get calls() {
      return seq;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      for (const [name, impl] of impls)
        Object.defineProperty(table, name, {
          value: impl,
          writable: true,
          configurable: true,
          enumerable: true,
        });
      tracing.delete(device);
    },
  };
}

const isView = (x: unknown): x is View =>
  typeof x === 'object' && x !== null && 'storage' in x && 'shape' in x && 'strides' in x;

/** The views among a kernel's arguments: positional ones, and the fields of an argument object. */
function viewsOf(args: unknown[]): [string, View][] {
  const found: [string, View][] = [];
  args.forEach((arg, i) => {
    if (isView(arg)) found.push([String(i), arg]);
    else if (typeof arg === 'object' && arg !== null && !ArrayBuffer.isView(arg) && !Array.isArray(arg))
      for (const [key, value] of Object.entries(arg)) if (isView(value)) found.push([key, value]);
  });
  return found;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * A hash of the bit patterns of the view's elements in row-major order, and their count: FNV-1a in four
 * interleaved lanes (word i of that sequence goes to lane i mod 4), then FNV-1a over the four lanes. The
 * lanes are four independent multiply chains, which the CPU overlaps: 3.2 GB/s against 600 MB/s for one
 * chain (a 33 MB float32 array, on the 2-core dev machine).
 */
function hashView(backend: Backend, view: View): string {
  const data: TypedArray =
    backend.name === 'cpu' ? dataOf(view) : (backend.readSync?.(view.storage) as TypedArray);
  const bytes = data.BYTES_PER_ELEMENT;
  // Whole 32-bit words per element where the element is a multiple of 4 bytes, else single bytes.
  const words =
    bytes % 4 === 0
      ? new Uint32Array(data.buffer, data.byteOffset, (data.length * bytes) / 4)
      : new Uint8Array(data.buffer, data.byteOffset, data.length * bytes);
  const per = bytes % 4 === 0 ? bytes / 4 : bytes;
  const lanes = new Int32Array([FNV_OFFSET, FNV_OFFSET, FNV_OFFSET, FNV_OFFSET]);
  let count = 0;
  forEachRun(view.shape, [view], (starts, n, steps) => {
    if (steps[0] === 1) hashWords(words, starts[0] * per, n * per, lanes, count * per);
    else {
      // Strided or broadcast (step 0) runs: element by element, inline (a call per element cost seconds a
      // training step, where a per-row value is broadcast along rows of logits).
      let index = count * per;
      const step = steps[0] * per;
      for (let i = 0, at = starts[0] * per; i < n; i++, at += step)
        for (let w = 0; w < per; w++, index++)
          lanes[index & 3] = Math.imul(lanes[index & 3] ^ words[at + w], FNV_PRIME);
    }
    count += n;
  });
  let h = FNV_OFFSET;
  for (const lane of lanes) h = Math.imul(h ^ lane, FNV_PRIME);
  return `${(h >>> 0).toString(16).padStart(8, '0')}:${count}`;
}

/** Adds words[from, from + n) to the lanes; `index` is the first word's index in the hashed sequence. */
function hashWords(
  words: Uint32Array | Uint8Array,
  from: number,
  n: number,
  lanes: Int32Array,
  index: number,
): void {
  let i = 0;
  // Up to the next multiple of 4 in the sequence one word at a time, then four lanes at once.
  for (; i < n && (index + i) % 4 !== 0; i++) {
    const lane = (index + i) % 4;
    lanes[lane] = Math.imul(lanes[lane] ^ words[from + i], FNV_PRIME);
  }
  let [h0, h1, h2, h3] = lanes;
  for (; i + 4 <= n; i += 4) {
    const at = from + i;
    h0 = Math.imul(h0 ^ words[at], FNV_PRIME);
    h1 = Math.imul(h1 ^ words[at + 1], FNV_PRIME);
    h2 = Math.imul(h2 ^ words[at + 2], FNV_PRIME);
    h3 = Math.imul(h3 ^ words[at + 3], FNV_PRIME);
  }
  lanes.set([h0, h1, h2, h3]);
  for (; i < n; i++) {
    const lane = (index + i) % 4;
    lanes[lane] = Math.imul(lanes[lane] ^ words[from + i], FNV_PRIME);
  }
}

/** One line of text per call (for a log file), read back by `parseTracedCall`. */
export function formatTracedCall(call: TracedCall): string {
  const operands = call.operands.map((o) => `${o.name}:${o.shape.join('x') || '-'}:${o.before}>${o.after}`);
  return [call.seq, call.op ? `${call.kernel}/${call.op}` : call.kernel, ...operands].join(' ');
}

export function parseTracedCall(line: string): TracedCall {
  const [seq, name, ...operands] = line.trim().split(' ');
  const slash = name?.indexOf('/') ?? -1;
  if (!name || Number.isNaN(Number(seq))) throw new Error(`parseTracedCall: not a traced call: "${line}"`);
  return {
    seq: Number(seq),
    kernel: slash < 0 ? name : name.slice(0, slash),
    op: slash < 0 ? undefined : name.slice(slash + 1),
    operands: operands.map((text) => parseOperand(text, line)),
  };
}

/** `key:shape:hash:count>hash:count`, as formatTracedCall writes an operand. */
function parseOperand(text: string, line: string): TracedOperand {
  const parts = text.split(':');
  const [before, after] = parts.length === 5 ? `${parts[2]}:${parts[3]}:${parts[4]}`.split('>') : [];
  if (after === undefined) throw new Error(`parseTracedCall: bad operand "${text}" in "${line}"`);
  const shape = parts[1] === '-' ? [] : parts[1].split('x').map(Number);
  return { name: parts[0], shape, before, after };
}

export interface Divergence {
  /** Position of the call in both traces. */
  index: number;
  a: TracedCall;
  b: TracedCall;
  /** 'kernel': the runs called different kernels or shapes here; 'result': the same call, other results. */
  kind: 'kernel' | 'result';
  /** Operands whose hash after the call differs between the runs. */
  differing: string[];
  /**
   * For a 'result' divergence: whether the call's inputs (the operands the call left unchanged in both
   * runs) were equal. True means this call computed differently from the same inputs; false means they
   * already differed (an earlier call wrote them, or code outside the kernels did). Operands a call
   * both reads and writes (an optimizer's state) count as outputs here.
   */
  inputsEqual: boolean;
}

/**
 * The first call at which two traces of runs that should be identical differ, or null when they agree
 * over the shorter one's length.
 */
export function firstDivergence(a: Iterable<TracedCall>, b: Iterable<TracedCall>): Divergence | null {
  const ib = b[Symbol.iterator]();
  let index = 0;
  for (const ca of a) {
    const next = ib.next();
    if (next.done) return null;
    const cb = next.value;
    const sameCall =
      ca.kernel === cb.kernel &&
      ca.op === cb.op &&
      ca.operands.length === cb.operands.length &&
      ca.operands.every(
        (o, k) => o.name === cb.operands[k].name && o.shape.join() === cb.operands[k].shape.join(),
      );
    if (!sameCall) return { index, a: ca, b: cb, kind: 'kernel', differing: [], inputsEqual: false };
    const differing = ca.operands.filter((o, k) => o.after !== cb.operands[k].after).map((o) => o.name);
    if (differing.length > 0) {
      const inputsEqual = ca.operands.every((o, k) => {
        const ob = cb.operands[k];
        const input = o.before === o.after && ob.before === ob.after;
        return !input || o.before === ob.before;
      });
      return { index, a: ca, b: cb, kind: 'result', differing, inputsEqual };
    }
    index++;
  }
  return null;
}
