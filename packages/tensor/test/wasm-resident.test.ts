/**
 * Float32 tensors that live in the wasm memory (backend/wasm/arena.ts over heap.ts): the block heap's
 * bookkeeping, where the CPU backend puts tensors, and that kernels reading and writing tensors in place
 * give the same bits as the same kernels copying them in and out.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import * as T from '../src/index.js';
import type { CpuStorage } from '../src/backend/cpu/storage.js';
import { BLOCK_ALIGN, BlockHeap } from '../src/backend/wasm/heap.js';
import { MIN_RESIDENT, poisonBlocks } from '../src/backend/wasm/arena.js';
import { disableWasmKernels, enableWasmKernels, wasmSimdSupported } from '../src/backend/wasm/index.js';
import { getWasmRuntime } from '../src/backend/wasm/runtime.js';
import { values } from './values.js';

/** A heap over [0, limit) whose "memory" only records how far it was grown. */
function testHeap(limit = 1 << 20) {
  const grown = { end: 0 };
  const heap = new BlockHeap(0, limit, (end) => {
    grown.end = Math.max(grown.end, end);
    return true;
  });
  return { heap, grown };
}

describe('BlockHeap', () => {
  test('aligned blocks from the top; freed blocks reused best-fit; neighbours merged; the top given back', () => {
    const { heap, grown } = testHeap();
    const a = heap.alloc(100);
    const b = heap.alloc(1000);
    const c = heap.alloc(64);
    expect([a, b, c].map((x) => x?.address)).toEqual([0, 128, 1152]);
    expect(a?.bytes).toBe(128);
    expect([a, b, c].every((x) => x?.fresh)).toBe(true);
    expect(grown.end).toBe(1216);
    heap.release(0, 100);
    heap.release(1152, 64);
    // The top shrank back over c; a's 128 bytes are the one free range.
    expect(heap.stats()).toEqual({ inUse: 1024, top: 1152, freeRanges: 1 });
    const d = heap.alloc(64);
    expect(d).toEqual({ address: 0, bytes: 64, fresh: false });
    heap.release(0, 64);
    heap.release(128, 1000);
    expect(heap.stats()).toEqual({ inUse: 0, top: 0, freeRanges: 0 });
    // Bytes handed out before are not fresh, bytes past the high-water mark are.
    expect(heap.alloc(2000)).toEqual({ address: 0, bytes: 2048, fresh: false });
  });

  test('best fit picks the smallest free range that holds the block', () => {
    const { heap } = testHeap();
    const blocks = [256, 64, 512, 64, 128, 64].map((n) => heap.alloc(n)?.address as number);
    heap.release(blocks[0], 256);
    heap.release(blocks[2], 512);
    heap.release(blocks[4], 128);
    expect(heap.alloc(100)?.address).toBe(blocks[4]);
    expect(heap.alloc(300)?.address).toBe(blocks[2]);
  });

  test('a block past the limit, or one the memory cannot grow to, is refused', () => {
    const { heap } = testHeap(4096);
    expect(heap.alloc(4096)?.address).toBe(0);
    expect(heap.alloc(1)).toBeUndefined();
    const refusing = new BlockHeap(0, 1 << 20, () => false);
    expect(refusing.alloc(64)).toBeUndefined();
  });

  test('freeing a block twice throws, and leaves the counts as they were', () => {
    const { heap } = testHeap();
    heap.alloc(64);
    const b = heap.alloc(64)?.address as number;
    heap.alloc(64);
    heap.release(b, 64);
    expect(() => heap.release(b, 64)).toThrow(/already free/);
    // A block given back to the top is no longer in use either; the count of bytes in use is untouched.
    expect(() => heap.release(128, 64)).not.toThrow();
    expect(() => heap.release(128, 64)).toThrow(/not in use/);
    expect(heap.stats().inUse).toBe(64);
  });

  test('random alloc/free sequences: blocks never overlap, and everything comes back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 5000 }), fc.nat()), { maxLength: 200 }),
        (ops) => {
          const { heap } = testHeap(1 << 24);
          const live: { address: number; bytes: number }[] = [];
          for (const [allocate, bytes, pick] of ops) {
            if (allocate || live.length === 0) {
              const block = heap.alloc(bytes);
              if (!block) return false;
              if (block.address % BLOCK_ALIGN !== 0 || block.bytes < bytes) return false;
              for (const other of live)
                if (
                  block.address < other.address + other.bytes &&
                  other.address < block.address + block.bytes
                )
                  return false;
              live.push(block);
            } else {
              const [gone] = live.splice(pick % live.length, 1);
              heap.release(gone.address, gone.bytes);
            }
            if (heap.stats().inUse !== live.reduce((s, b) => s + b.bytes, 0)) return false;
          }
          for (const b of live) heap.release(b.address, b.bytes);
          const end = heap.stats();
          return end.inUse === 0 && end.top === 0 && end.freeRanges === 0;
        },
      ),
    );
  });
});

describe.skipIf(!wasmSimdSupported())('tensors in the wasm memory', () => {
  afterAll(() => disableWasmKernels());
  const addressOf = (t: T.Tensor) => getWasmRuntime().addressOf((t.storage as CpuStorage).data);

  test('large float32 tensors live in the wasm memory; small, other dtypes and opted-out ones do not', () => {
    enableWasmKernels();
    const big = T.zeros([MIN_RESIDENT]);
    const small = T.zeros([MIN_RESIDENT - 1]);
    const f64 = T.zeros([MIN_RESIDENT], { dtype: 'float64' });
    expect(addressOf(big)).toBeGreaterThan(0);
    expect(addressOf(small)).toBeUndefined();
    expect(addressOf(f64)).toBeUndefined();
    enableWasmKernels({ residentTensors: false });
    expect(addressOf(T.zeros([MIN_RESIDENT]))).toBeUndefined();
    // Allocated before the switch, still in the wasm memory and still readable.
    expect(addressOf(big)).toBeGreaterThan(0);
    disableWasmKernels();
    expect(addressOf(T.zeros([MIN_RESIDENT]))).toBeUndefined();
    T.dispose([big, small, f64]);
  });

  test('dispose gives the block back; a reused block is handed out as it was left (or NaN, poisoned: handed out and given back)', () => {
    enableWasmKernels();
    const heap = getWasmRuntime().heap;
    const before = heap.stats().inUse;
    const a = T.full([4096], 7);
    expect(heap.stats().inUse).toBe(before + 4 * 4096);
    expect(T.wasmMemoryInfo().inUse).toBe(before + 4 * 4096);
    expect(T.wasmMemoryInfo().bytes).toBeGreaterThanOrEqual(T.wasmMemoryInfo().top);
    const at = addressOf(a);
    a.dispose();
    expect(heap.stats().inUse).toBe(before);
    const storage = T.getBackend('cpu').alloc('float32', 4096) as CpuStorage;
    expect(getWasmRuntime().addressOf(storage.data)).toBe(at);
    expect(storage.data.every((x) => x === 7)).toBe(true);
    T.getBackend('cpu').free(storage);
    expect(heap.stats().inUse).toBe(before);
    poisonBlocks(true);
    const poisoned = T.getBackend('cpu').alloc('float32', 4096) as CpuStorage;
    expect(getWasmRuntime().addressOf(poisoned.data)).toBe(at);
    expect(poisoned.data.every(Number.isNaN)).toBe(true);
    // A block given back while poisoning is NaN too: a read through an array kept past its free shows.
    poisoned.data.fill(5);
    const kept = poisoned.data;
    T.getBackend('cpu').free(poisoned);
    poisonBlocks(false);
    expect(kept.every(Number.isNaN)).toBe(true);
    // Zeros are zeros all the same: the op layer fills them.
    const z = T.zeros([4096]);
    expect(addressOf(z)).toBe(at);
    expect(z.dataSync().every((x) => x === 0)).toBe(true);
    z.dispose();
  });

  test("poisoning also fills the kernels' scratch block with NaN each time a call takes it", () => {
    enableWasmKernels();
    const rt = getWasmRuntime();
    const first = rt.scratch(4096);
    first.mem.fill(1, first.base / 4, first.base / 4 + 1024);
    // Not poisoning: a call finds what the last one left.
    const again = rt.scratch(4096);
    expect(again.mem.subarray(again.base / 4, again.base / 4 + 1024).every((x) => x === 1)).toBe(true);
    poisonBlocks(true);
    try {
      const poisoned = rt.scratch(4096);
      expect(poisoned.mem.subarray(poisoned.base / 4, poisoned.base / 4 + 1024).every(Number.isNaN)).toBe(
        true,
      );
    } finally {
      poisonBlocks(false);
    }
  });

  test('poisoning with holdBackBytes keeps freed blocks out of reuse (NaN) until that many bytes wait', () => {
    enableWasmKernels();
    const backend = T.getBackend('cpu');
    const heap = getWasmRuntime().heap;
    const block = 4 * 4096;
    const before = heap.stats().inUse;
    poisonBlocks(true, { holdBackBytes: 2 * block });
    try {
      const a = backend.alloc('float32', 4096) as CpuStorage;
      const kept = a.data;
      const at = getWasmRuntime().addressOf(kept);
      backend.free(a);
      // Without a hold-back the next block would be a's (the test above); here it is elsewhere, and a read
      // through the freed array still meets NaN.
      const b = backend.alloc('float32', 4096) as CpuStorage;
      expect(getWasmRuntime().addressOf(b.data)).not.toBe(at);
      b.data.fill(3);
      expect(kept.every(Number.isNaN)).toBe(true);
      const c = backend.alloc('float32', 4096) as CpuStorage;
      expect(heap.stats().inUse).toBe(before + 3 * block);
      // a and b wait (2 blocks); a third freed block gives the oldest, a's, back to the allocator.
      backend.free(b);
      expect(heap.stats().inUse).toBe(before + 3 * block);
      backend.free(c);
      expect(heap.stats().inUse).toBe(before + 2 * block);
      const d = backend.alloc('float32', 4096) as CpuStorage;
      expect(getWasmRuntime().addressOf(d.data)).toBe(at);
      backend.free(d);
      expect(() => poisonBlocks(true, { holdBackBytes: -1 })).toThrow(/holdBackBytes must be ≥ 0, got -1/);
    } finally {
      poisonBlocks(false);
    }
    // Turning poisoning off gives every held block back.
    expect(heap.stats().inUse).toBe(before);
  });

  /**
   * Every kernel that uses operands in place, forward and backward: matmul (output rows a multiple of 4 or
   * not), elementwise (relu, mul), softmax, logprobs, layer norm, attention, and an AdamW step. Inputs are made with the
   * arena on or off per input (`resident[i]`), so operands are in place, copied, or a mix.
   */
  function run(resident: (i: number) => boolean): Float32Array[] {
    let i = 0;
    const input = (shape: number[], scale = 1) => {
      enableWasmKernels({ residentTensors: resident(i) });
      const t = T.tensor(values(T.sizeOf(shape), 11 + i, scale), { shape, requiresGrad: true });
      i++;
      return t;
    };
    const x = input([128, 48]);
    const w = input([48, 36], 0.2);
    const w2 = input([36, 42], 0.2);
    const gamma = input([42]);
    const q = input([2, 4, 40, 16]);
    const k = input([2, 2, 40, 16]);
    const v = input([2, 2, 40, 16]);
    const targets = T.tensor(
      Int32Array.from({ length: 128 }, (_, r) => (r * 7) % 42),
      { dtype: 'int32' },
    );
    const h = T.matmul(x, w).relu();
    const logits = T.layerNorm(T.matmul(h, w2), gamma);
    const attn = T.scaledDotProductAttention(q, k, v, { causal: true });
    const loss = T.logprobs(logits, targets)
      .sum()
      .add(T.softmax(logits, -1).mul(logits).sum())
      .add(attn.mul(attn).sum());
    loss.backward();
    const outs = [loss, logits, attn, ...[x, w, w2, gamma, q, k, v].map((t) => t.grad as T.Tensor)];
    // One AdamW step on x (updated in place).
    const m = T.zerosLike(x);
    const s = T.zerosLike(x);
    const hyper = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, step: 1 };
    T.adamwUpdate(x, x.grad as T.Tensor, m, s, hyper);
    const result = [...outs, x, m, s].map((t) => (t.dataSync() as Float32Array).slice());
    disableWasmKernels();
    return result;
  }

  test('in place and copied operands give the same bits, forward and backward; no kernel reads an element it did not write', () => {
    const copied = run(() => false);
    const inPlace = run(() => true);
    const mixed = run((i) => i % 2 === 0);
    // Every block NaN as it is handed out: an output element a kernel left unwritten (or a scratch it read before writing)
    // would turn results NaN. Blocks freed by the runs above are reused here.
    T.zeros([1 << 18]).dispose(); // 1 MiB handed out and back: the run below reuses it
    poisonBlocks(true);
    let poisoned: Float32Array[];
    try {
      poisoned = run(() => true);
    } finally {
      poisonBlocks(false);
    }
    const bits = (a: Float32Array) => Buffer.from(a.buffer);
    for (const other of [inPlace, mixed, poisoned])
      for (const [j, a] of other.entries()) expect(bits(a).equals(bits(copied[j])), `output ${j}`).toBe(true);
  });

  test("attention over a KV cache's buffer cut to its keys: the same bits in the wasm memory or on the JS heap", () => {
    // The cache's K and V buffers hold 64 positions; a pass reads the first 40, so a head's rows are dense
    // but the heads are not contiguous. Rows of the batch keep 40 and 23 keys (a prefix mask).
    const keep = T.tensor(
      Uint8Array.from({ length: 2 * 40 }, (_, i) => (i % 40 < (i < 40 ? 40 : 23) ? 1 : 0)),
      { shape: [2, 1, 1, 40], dtype: 'bool' },
    );
    const attend = (resident: boolean) => {
      enableWasmKernels({ residentTensors: resident });
      const q = T.tensor(values(2 * 4 * 3 * 16, 31), { shape: [2, 4, 3, 16] });
      const [k, v] = [32, 33].map((seed) =>
        T.tensor(values(2 * 2 * 64 * 16, seed), { shape: [2, 2, 64, 16] }).narrow(2, 0, 40),
      );
      expect(addressOf(k) === undefined).toBe(!resident);
      const out = T.scaledDotProductAttention(q, k, v, { mask: keep });
      const bits = Buffer.from((out.dataSync() as Float32Array).slice().buffer);
      disableWasmKernels();
      return bits;
    };
    expect(attend(false).equals(attend(true))).toBe(true);
  });

  test('a matmul packs its A in the module (in place) with the bits of the JavaScript packing (copied)', () => {
    // Rows and k with every remainder mod 4, A row-major, transposed (rows contiguous: pack_a's one vector
    // per k) and strided (a column slice); the A is large enough to live in the wasm memory when asked.
    const product = (M: number, K: number, layout: string, resident: boolean) => {
      enableWasmKernels({ residentTensors: resident });
      const rows = layout === 'strided' ? 2 * K : K;
      let a = T.tensor(values(Math.max(M * rows, MIN_RESIDENT), 5, 1).subarray(0, M * rows), {
        shape: layout === 'transposed' ? [rows, M] : [M, rows],
      });
      if (layout === 'transposed') a = a.transpose(0, 1);
      if (layout === 'strided') a = a.narrow(1, 1, K);
      const b = T.tensor(values(K * 12, 6, 0.3), { shape: [K, 12] });
      const out = (T.matmul(a, b).dataSync() as Float32Array).slice();
      disableWasmKernels();
      return Buffer.from(out.buffer);
    };
    for (const [M, K] of [
      [257, 33],
      [258, 40],
      [259, 61],
      [300, 7],
    ])
      for (const layout of ['row-major', 'transposed', 'strided'])
        expect(product(M, K, layout, true).equals(product(M, K, layout, false)), `${M}×${K} ${layout}`).toBe(
          true,
        );
  });
});
