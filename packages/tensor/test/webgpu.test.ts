/**
 * WebGPU-specific behaviour: dtype limits, errors surfacing as exceptions that name the kernel, deferred frees,
 * batching, per-rank pipeline caching, large grids, and a small transformer training step under `tidy` whose
 * GPU memory stays flat over 50 steps. (Numerical agreement with the CPU is webgpu-cross-backend.test.ts.)
 */
import { describe, expect, test } from 'vitest';
import {
  type Tensor,
  adamwUpdate,
  crossEntropy,
  embedding,
  gather,
  getBackend,
  layerNorm,
  logprobs,
  matmul,
  memory,
  randn,
  scaledDotProductAttention,
  softmax,
  sum,
  supportsDtype,
  tensor,
  tidy,
  transpose,
  Generator,
} from '../src/index.js';
import { type WebGpuBackendInternal, createWebGpuBackend } from '../src/backend/webgpu/index.js';
import { Params } from '../src/backend/webgpu/queue.js';
import { PARAMS, buffer } from '../src/backend/webgpu/wgsl.js';
import { acquireDevice } from './cross-backend/device.js';

const available = await acquireDevice('webgpu');
const gpu = () => getBackend('webgpu') as WebGpuBackendInternal;

describe.skipIf(!available)('webgpu backend', () => {
  test('float64 is refused with a clear error; bool and int32 round-trip', async () => {
    expect(() => tensor([1, 2], { device: 'webgpu', dtype: 'float64' })).toThrow(
      /float64 is not supported on WebGPU/,
    );
    // What callers check before choosing float64 (e.g. clipGradNorm's sums of squares).
    expect(supportsDtype('webgpu', 'float64')).toBe(false);
    expect(supportsDtype('webgpu', 'float32')).toBe(true);
    expect(supportsDtype('cpu', 'float64')).toBe(true);
    const b = tensor([true, false, true], { device: 'webgpu' });
    expect(Array.from(await b.data())).toEqual([1, 0, 1]);
    const i = tensor(Int32Array.from([-5, 7, 2 ** 31 - 1]), { device: 'webgpu' });
    expect(Array.from(await i.data())).toEqual([-5, 7, 2 ** 31 - 1]);
    expect(() => i.dataSync()).toThrow(/cannot read synchronously; use await tensor.data\(\)/);
    b.dispose();
    i.dispose();
  });

  test('half tensors take two bytes an element; writes that start or end inside a word keep its other half', async () => {
    const be = gpu();
    const n = 100_001; // odd: the last word is half padding
    const before = be.memoryInfo().inUseBytes;
    const wide = be.alloc('float32', n);
    const wideBytes = be.memoryInfo().inUseBytes - before;
    const half = be.alloc('bfloat16', n);
    const halfBytes = be.memoryInfo().inUseBytes - before - wideBytes;
    // Size classes round each up by at most a fifth.
    expect(halfBytes).toBeGreaterThanOrEqual(2 * n);
    expect(halfBytes).toBeLessThan(0.6 * wideBytes);
    be.free(wide);
    be.free(half);
    for (const dtype of ['float16', 'bfloat16'] as const) {
      const bits = Uint16Array.from({ length: 11 }, (_, i) => 0x3c00 + 17 * i);
      const storage = be.alloc(dtype, 11);
      be.write(storage, bits);
      // Odd offsets and odd lengths, ending inside the storage: the neighbours in the same word survive.
      be.write(storage, Uint16Array.from([1, 2, 3]), 3);
      be.write(storage, Uint16Array.from([4, 5]), 7);
      be.write(storage, Uint16Array.from([6]), 10);
      const want = Array.from(bits);
      want.splice(3, 3, 1, 2, 3);
      want.splice(7, 2, 4, 5);
      want[10] = 6;
      expect(Array.from(await be.read(storage))).toEqual(want);
      be.free(storage);
    }
  });

  test('a Dawn validation error is thrown naming the kernel, once; the queue goes on', async () => {
    const q = gpu().queue;
    const storage = gpu().alloc('float32', 4) as Parameters<typeof q.release>[0];
    const pipeline = q.pipeline(
      'test|too-many-groups',
      () =>
        `${PARAMS}\n${buffer(1, 'out', 'float32', true)}\n@compute @workgroup_size(1) fn main() { out[0] = pf(0u); }`,
    );
    // 70000 workgroups in x exceeds maxComputeWorkgroupsPerDimension (65535): Dawn rejects the dispatch.
    q.dispatch(
      'deliberately-invalid-kernel',
      pipeline,
      [{ storage, write: true }],
      new Params().f32s(1),
      [70000],
    );
    await expect(gpu().sync()).rejects.toThrow(/deliberately-invalid-kernel/);
    gpu().free(storage);
    const t = tensor([1, 2, 3], { device: 'webgpu' });
    expect(Array.from(await t.add(1).data())).toEqual([2, 3, 4]);
    t.dispose();
  });

  test('out-of-range gather indices and logprobs targets are thrown on the next read', async () => {
    const x = tensor([[1, 2, 3]], { device: 'webgpu' });
    const idx = tensor(Int32Array.from([[0, 5, 1]].flat()), { device: 'webgpu', shape: [1, 3] });
    const g = gather(x, 1, idx);
    await expect(g.data()).rejects.toThrow(
      /gather: an index is out of range for dimension 1 of size 3.*got 5/,
    );
    const t = tensor(Int32Array.from([3]), { device: 'webgpu' });
    const lp = logprobs(x, t);
    await expect(lp.data()).rejects.toThrow(/logprobs: a target is out of range \[0, 3\).*got 3/);
    expect(Array.from(await x.mul(2).data())).toEqual([2, 4, 6]);
    for (const v of [x, idx, g, t, lp]) v.dispose();
  });

  test('a freed buffer that queued work still reads is not reused before that work is submitted', async () => {
    const n = 1000;
    const a = tensor(new Float32Array(n).fill(1), { device: 'webgpu' });
    const b = a.add(1); // queued, reads a
    a.dispose();
    // Same size class: were a's buffer recycled now, this write would land before the queued add runs.
    const c = tensor(new Float32Array(n).fill(100), { device: 'webgpu' });
    const [bv, cv] = await Promise.all([b.data(), c.data()]);
    expect(bv.every((v) => v === 2)).toBe(true);
    expect(cv.every((v) => v === 100)).toBe(true);
    b.dispose();
    c.dispose();
  });

  test('many dispatches share one submit; pipelines are cached per rank, not per shape', async () => {
    const be = gpu();
    const run = (m: number, n: number, k: number) =>
      tidy(() => {
        const a = randn([m, k], { device: 'webgpu' });
        const b = randn([n, k], { device: 'webgpu' });
        return softmax(
          matmul(a, transpose(b))
            .add(1)
            .mul(transpose(randn([n, m], { device: 'webgpu' }))),
          -1,
        );
      });
    const first = run(17, 9, 33);
    await first.data();
    first.dispose();
    const pipelines = be.stats.pipelines;
    const before = { ...be.stats };
    const second = run(40, 65, 70);
    await second.data();
    second.dispose();
    expect(be.stats.pipelines).toBe(pipelines);
    expect(be.stats.dispatches - before.dispatches).toBeGreaterThanOrEqual(6);
    expect(be.stats.submits - before.submits).toBeLessThanOrEqual(2);
  });

  test('grids beyond 65535 workgroups (rows of a softmax, outputs of a reduction)', async () => {
    const rows = 70001;
    const x = tensor(
      Float32Array.from({ length: rows * 2 }, (_, i) => (i % 2 ? 1 : 0)),
      { device: 'webgpu', shape: [rows, 2] },
    );
    const y = await softmax(x, -1).data();
    const e = 1 / (1 + Math.E);
    expect(Math.abs(y[0] - e)).toBeLessThan(1e-6);
    expect(Math.abs(y[2 * rows - 1] - (1 - e))).toBeLessThan(1e-6);
    const s = await sum(x, 1).data();
    expect(s[rows - 1]).toBe(1);
    x.dispose();
  });

  test('a missing adapter is a clear error saying what to install', async () => {
    await expect(createWebGpuBackend({ dawnBackend: 'd3d12' })).rejects.toThrow(
      /no GPU adapter is available.*install/,
    );
  });

  test('a transformer training step under tidy keeps GPU memory flat over 50 steps', async () => {
    const be = gpu();
    const dev = { device: 'webgpu' };
    const [V, D, T, B, H] = [29, 16, 9, 2, 2];
    const gen = new Generator(7);
    const param = (shape: number[], scale: number) => {
      const p = randn(shape, { ...dev, generator: gen }).mul(scale);
      p.requiresGrad = true;
      return p;
    };
    const params = {
      emb: param([V, D], 0.5),
      wqkv: param([D, 3 * D], 0.2),
      wo: param([D, D], 0.2),
      w1: param([D, 2 * D], 0.2),
      w2: param([2 * D, D], 0.2),
      ln: param([D], 0.1),
    };
    const state = Object.values(params).map((p) => ({ p, m: p.mul(0), v: p.mul(0) }));
    const ids = tensor(
      Int32Array.from({ length: B * T }, (_, i) => (i * 7) % V),
      { ...dev, shape: [B, T] },
    );
    const targets = tensor(
      Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % V),
      { ...dev, shape: [B * T] },
    );
    const step = (k: number): Tensor =>
      tidy(() => {
        const x = embedding(params.emb, ids); // [B, T, D]
        const h = layerNorm(x, params.ln.add(1));
        const qkv = matmul(h, params.wqkv)
          .reshape([B, T, 3, H, D / H])
          .permute([2, 0, 3, 1, 4]);
        const [q, kk, v] = [0, 1, 2].map((i) => qkv.select(0, i));
        const att = scaledDotProductAttention(q, kk, v, { causal: true })
          .permute([0, 2, 1, 3])
          .reshape([B, T, D]);
        const y = x.add(matmul(att, params.wo));
        const z = y.add(matmul(matmul(y, params.w1).gelu(), params.w2));
        const logits = matmul(z, transpose(params.emb)).reshape([B * T, V]);
        const loss = crossEntropy(logits, targets);
        loss.backward();
        for (const s of state) {
          adamwUpdate(s.p, s.p.grad!, s.m, s.v, { lr: 0.02, weightDecay: 0.01, step: k });
          s.p.zeroGrad();
        }
        return loss;
      });
    const losses: number[] = [];
    let storagesAt5 = 0;
    let bytesAt5 = 0;
    for (let k = 1; k <= 50; k++) {
      const loss = step(k);
      losses.push(await loss.item());
      loss.dispose();
      if (k === 5) {
        storagesAt5 = memory().backends.webgpu.storages;
        bytesAt5 = be.memoryInfo().allocatedBytes;
      }
    }
    expect(memory().backends.webgpu.storages).toBe(storagesAt5);
    expect(be.memoryInfo().allocatedBytes).toBe(bytesAt5);
    expect(losses[49]).toBeLessThan(losses[0] * 0.5);
    for (const s of state) for (const t of [s.p, s.m, s.v]) t.dispose();
    ids.dispose();
    targets.dispose();
  });
});
