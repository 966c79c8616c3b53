/**
 * The cuda backend on a GPU: the cross-backend property suite (every primitive against the CPU reference,
 * forward and backward; see cross-backend/suite.ts), float64 gradient checks run on the device, the half
 * types (cross-backend/half.ts), and what
 * only this backend has (Threefry draws bit-for-bit, kernel-raised index errors, the allocator's reuse).
 * Skips with one line without a CUDA driver; REQUIRE_CUDA=1 makes that a failure.
 *
 * Tolerances: float32 kernels use the CUDA math library (expf, logf, tanhf: 1–2 ulp) and fast __expf
 * inside attention; reductions and dot products accumulate in float32 in a different order than the CPU's
 * float64 (a few ulp per term), so matmul is 2e-6·K, sums 1e-4. AdamW and random compute in double and
 * round once, as the CPU does.
 */
import { describe, expect, test } from 'vitest';
import {
  type CudaBackend,
  Generator,
  type Tensor,
  createCudaBackend,
  gather,
  getBackend,
  initBackend,
  matmul,
  rand,
  randn,
  registerBackend,
  tensor,
} from '../src/index.js';
import { acquireDevice } from './cross-backend/device.js';
import { FLOAT64_GRADCHECK, deviceGradcheckSuite } from './cross-backend/gradcheck.js';
import { halfPrecisionCases } from './cross-backend/half.js';
import { crossBackendSuite } from './cross-backend/suite.js';

const available = await acquireDevice('cuda');

if (available) {
  crossBackendSuite('cuda', {
    runs: 20,
    tolerances: {
      elementwise: { atol: 2e-6, rtol: 2e-5 },
      reduce: { atol: 1e-4, rtol: 1e-5 },
      matmul: { atol: 2e-6, rtol: 1e-5 },
      softmax: { atol: 2e-6, rtol: 5e-5 },
      norm: { atol: 1e-4, rtol: 1e-4 },
      attention: { atol: 2e-5, rtol: 1e-4 },
      optim: { atol: 1e-6, rtol: 1e-6 },
      random: { atol: 2e-6, rtol: 2e-6 },
      // Box–Muller in double, rounded once: only the device's double log/cos can differ from the host's.
      normal: { atol: 2e-6, rtol: 2e-6 },
    },
  });

  deviceGradcheckSuite('cuda', FLOAT64_GRADCHECK);

  // Half matmuls go through cuBLAS GemmEx here where libcublas is found, through the tiled kernel otherwise.
  describe('cuda: float16 and bfloat16', () => halfPrecisionCases('cuda'));

  describe('cuda: backend specifics', () => {
    test('uniform and normal draws equal the CPU backend bit for bit', async () => {
      for (const draw of [rand, randn]) {
        const onGpu = await draw([4097], { device: 'cuda', generator: new Generator(7) }).data();
        const onCpu = await draw([4097], { generator: new Generator(7) }).data();
        if (draw === rand) expect(onGpu).toEqual(onCpu);
        else
          for (let i = 0; i < onCpu.length; i++)
            expect(Math.abs(onGpu[i] - onCpu[i])).toBeLessThanOrEqual(2e-7 * (1 + Math.abs(onCpu[i])));
      }
    });

    test('an out-of-range gather index surfaces as an error at the next read', async () => {
      const x = tensor([1, 2, 3], { device: 'cuda' });
      const bad = tensor(Int32Array.from([0, 5]), { device: 'cuda' });
      const out = gather(x, 0, bad);
      await expect(out.data()).rejects.toThrow(/gather: an index was out of range/);
      // The error word is cleared: the next read succeeds.
      expect([...(await x.data())]).toEqual([1, 2, 3]);
    });

    test('matmul equals the CPU through cuBLAS (where found) and through the kernels alike', async () => {
      registerBackend('cuda-kernels', () => createCudaBackend({ name: 'cuda-kernels', matmul: 'kernels' }));
      await initBackend('cuda-kernels');
      const g = new Generator(11);
      // Row-major, transposed, batch-broadcast and padded-row operands (views made on the device, so
      // that the GEMM sees their strides); sizes off every tile edge.
      const cases: [Tensor, Tensor, (x: Tensor) => Tensor, (x: Tensor) => Tensor][] = [
        [randn([65, 33], { generator: g }), randn([33, 70], { generator: g }), (x) => x, (x) => x],
        [
          randn([3, 129, 40], { generator: g }),
          randn([3, 70, 40], { generator: g }),
          (x) => x,
          (x) => x.transpose(),
        ],
        [randn([2, 1, 17, 9], { generator: g }), randn([4, 9, 130], { generator: g }), (x) => x, (x) => x],
        [
          randn([40, 96], { generator: g }),
          randn([50, 31], { generator: g }),
          (x) => x.slice(1, 0, 50),
          (x) => x,
        ],
      ];
      for (const [a, b, viewA, viewB] of cases) {
        const want = await matmul(viewA(a), viewB(b)).data();
        const K = viewA(a).shape.at(-1) as number;
        for (const device of ['cuda', 'cuda-kernels']) {
          const got = await matmul(viewA(a.to(device)), viewB(b.to(device))).data();
          for (let i = 0; i < want.length; i++)
            expect(
              Math.abs(got[i] - want[i]),
              `${device} [${a.shape}]·[${b.shape}] at ${i}`,
            ).toBeLessThanOrEqual(2e-6 * K * (1 + Math.abs(want[i])));
        }
      }
      const { libcublas } = (getBackend('cuda') as CudaBackend).device;
      console.log(`cuda matmul: ${libcublas ? `cuBLAS (${libcublas})` : 'the kernels (no libcublas found)'}`);
    });

    test('freed device memory is reused from the pool', async () => {
      const backend = getBackend('cuda') as CudaBackend;
      const a = randn([1000, 1000], { device: 'cuda' });
      await backend.sync();
      const before = backend.memoryStats();
      a.dispose();
      const b = randn([1000, 1000], { device: 'cuda' });
      await backend.sync();
      const after = backend.memoryStats();
      expect(after.reservedBytes).toBe(before.reservedBytes);
      b.dispose();
      expect(backend.memoryStats().pooledBytes).toBeGreaterThanOrEqual(4_000_000);
    });
  });
} else {
  describe('cuda vs cpu', () => {
    test.skip('no CUDA driver (see the warning above)', () => {});
  });
}
