/**
 * WebGPU against the CPU reference (see cross-backend/suite.ts). Tolerances: WebGPU computes in float32
 * throughout (the CPU accumulates sums and dot products in float64, then rounds), so reductions and dot
 * products may differ by a few ulp per term: matmul by 2e-6·max(M, N, K) absolute, sums by 1e-4.
 * Transcendentals follow the device's f32 library (a few ulp).
 */
import { describe, test } from 'vitest';
import { acquireDevice } from './cross-backend/device.js';
import { crossBackendSuite } from './cross-backend/suite.js';

const available = await acquireDevice('webgpu');

if (available) {
  crossBackendSuite('webgpu', {
    runs: 12,
    tolerances: {
      elementwise: { atol: 2e-6, rtol: 2e-5 },
      reduce: { atol: 1e-4, rtol: 1e-5 },
      matmul: { atol: 2e-6, rtol: 1e-5 },
      softmax: { atol: 2e-6, rtol: 5e-5 },
      norm: { atol: 1e-4, rtol: 1e-4 },
      attention: { atol: 2e-5, rtol: 1e-4 },
      optim: { atol: 1e-6, rtol: 1e-5 },
      random: { atol: 2e-6, rtol: 2e-6 },
    },
  });
} else {
  describe('webgpu vs cpu', () => {
    test.skip('no WebGPU adapter (see the warning above)', () => {});
  });
}
