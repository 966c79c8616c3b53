/**
 * The cuda backend's generated kernels executed without a GPU: each kernel source is compiled as host C++
 * and run on CPU threads (test/cuda/emulator), behind the real launchers, and the whole cross-backend
 * property suite compares the results with the CPU backend. This checks the kernels' logic — indexing,
 * strides and broadcasting, tiling, shared-memory reductions, warp shuffles, online softmax, the attention
 * backward — not GPU numerics, scheduling or speed. Skips with one line where g++ is absent.
 *
 * Tolerances as for the GPU (test/cuda-cross-backend.test.ts): the kernels accumulate in float32 in
 * their own order; transcendentals come from the host's libm here.
 */
import { afterAll, describe, test } from 'vitest';
import { acquireDevice } from './cross-backend/device.js';
import { crossBackendSuite } from './cross-backend/suite.js';
import { registerEmulatedCuda } from './cuda/emulator/emulator.js';
import { emulatedSmoke } from './cuda/emulator/smoke.js';

const emulator = registerEmulatedCuda('cuda-emu');
const available = emulator.registered && (await acquireDevice('cuda-emu'));
afterAll(() => emulator.cleanup());

// The fixed cases of emulator/smoke.ts reach every primitive (and the half types); the property suite
// then draws shapes, strides and values for each family (about a minute each on two cores).
if (available) {
  emulatedSmoke('cuda-emu');
  crossBackendSuite('cuda-emu', {
    runs: 4,
    tolerances: {
      elementwise: { atol: 2e-6, rtol: 2e-5 },
      reduce: { atol: 1e-4, rtol: 1e-5 },
      matmul: { atol: 2e-6, rtol: 1e-5 },
      softmax: { atol: 2e-6, rtol: 5e-5 },
      norm: { atol: 1e-4, rtol: 1e-4 },
      attention: { atol: 2e-5, rtol: 1e-4 },
      optim: { atol: 1e-6, rtol: 1e-6 },
      random: { atol: 2e-6, rtol: 2e-6 },
      normal: { atol: 2e-6, rtol: 2e-6 },
    },
  });
} else {
  describe('cuda kernels on the CPU emulator', () => {
    test.skip('g++ not found: the emulated run of the cuda kernels is skipped', () => {});
  });
}
