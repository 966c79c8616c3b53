/**
 * WebGPU against the CPU reference (see cross-backend/suite.ts). Tolerances: WebGPU computes in float32
 * throughout (the CPU accumulates sums and dot products in float64, then rounds), so reductions and dot
 * products may differ by a few ulp per term: matmul by 2e-6·max(M, N, K) absolute, sums by 1e-4.
 * Transcendentals follow the device's f32 library (a few ulp).
 */
import { describe, test } from 'vitest';
import { getBackend, registerBackend } from '../src/index.js';
import { type WebGpuBackend, createWebGpuBackend } from '../src/backend/webgpu/index.js';
import { acquireDevice } from './cross-backend/device.js';
import { FLOAT32_GRADCHECK, deviceGradcheckSuite } from './cross-backend/gradcheck.js';
import { halfPrecisionCases } from './cross-backend/half.js';
import { type SuiteOptions, crossBackendSuite } from './cross-backend/suite.js';

const available = await acquireDevice('webgpu');

if (available) {
  const options: SuiteOptions = {
    runs: 12,
    tolerances: {
      elementwise: { atol: 2e-6, rtol: 2e-5 },
      reduce: { atol: 1e-4, rtol: 1e-5 },
      matmul: { atol: 2e-6, rtol: 1e-5 },
      softmax: { atol: 2e-6, rtol: 5e-5 },
      // Normalising amplifies input rounding by rstd (large for rows of nearly equal values).
      norm: { atol: 1e-4, rtol: 5e-4 },
      attention: { atol: 2e-5, rtol: 1e-4 },
      optim: { atol: 1e-6, rtol: 1e-5 },
      random: { atol: 2e-6, rtol: 2e-6 },
      normal: { atol: 5e-5, rtol: 2e-5 },
    },
  };
  crossBackendSuite('webgpu', {
    ...options,
    families: ['elementwise', 'reductions', 'matmul', 'indexing', 'fused', 'long loops', 'random'],
  });
  // Matmul, softmax and logprobs have kernels for GPUs (workgroup memory) and for CPU rasterisers (none):
  // test the variant this adapter does not pick, too.
  const main = getBackend('webgpu') as WebGpuBackend;
  const other = main.kernelVariant === 'software' ? 'hardware' : 'software';
  registerBackend(`webgpu-${other}`, await createWebGpuBackend({ kernels: other }, `webgpu-${other}`));
  crossBackendSuite(`webgpu-${other}`, { ...options, families: ['matmul', 'fused'] });
  // WebGPU has no float64: the gradient checks run in float32 with a larger step (see gradcheck.ts).
  deviceGradcheckSuite('webgpu', FLOAT32_GRADCHECK);
  deviceGradcheckSuite(`webgpu-${other}`, FLOAT32_GRADCHECK);
  describe('webgpu: float16 and bfloat16', () => halfPrecisionCases('webgpu', { float64: false }));
} else {
  describe('webgpu vs cpu', () => {
    test.skip('no WebGPU adapter (see the warning above)', () => {});
  });
}
