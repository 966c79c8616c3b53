/**
 * The policy model trained on the cuda backend: a small TransformerLM with a copy head, moved there with
 * `module.to`, for three AdamW steps, in float32 and in bfloat16; the losses must follow the CPU backend's.
 * Every primitive is checked on its own in the tensor package; this checks that a whole training step
 * composes them as the CPU does. It runs on the tensor package's CUDA emulator (each generated kernel built
 * as host C++ and run behind the real launchers; skipped with one line without g++) and, where a CUDA driver
 * and NVRTC are found, on the GPU (skipped with one line otherwise; REQUIRE_CUDA=1 makes that a failure).
 */
import { type FloatDType, crossEntropy, initBackend, tensor, tidy } from '@agent-r1/tensor';
import { describe, expect, test } from 'vitest';
import { registerEmulatedCuda } from '../../tensor/test/cuda/emulator/emulator.js';
import { AdamW, TransformerLM } from '../src/index.js';

const emulator = registerEmulatedCuda('cuda-emu-lm');
const gpu = await initBackend('cuda').then(
  () => true,
  (err: Error) => {
    if (process.env.REQUIRE_CUDA === '1') throw err;
    return false;
  },
);

function trainingLosses(device: string, dtype: FloatDType): number[] {
  const model = new TransformerLM({
    vocabSize: 23,
    dModel: 16,
    layers: 1,
    heads: 2,
    kvHeads: 1,
    maxLength: 16,
    seed: 3,
    copyHead: true,
    dtype,
  });
  if (device !== 'cpu') model.to(device);
  const opt = new AdamW(model.parameters(), { lr: 0.01 });
  const ids = tensor([[1, 5, 2, 9, 3, 7, 1, 5, 2]], { dtype: 'int32', device });
  const losses: number[] = [];
  for (let step = 0; step < 3; step++)
    losses.push(
      tidy(() => {
        const loss = crossEntropy(model.forward(ids.slice(1, 0, -1)).logits, ids.slice(1, 1));
        loss.backward();
        opt.step();
        opt.zeroGrad();
        return loss.cast('float32').dataSync()[0];
      }),
    );
  opt.dispose();
  model.dispose();
  ids.dispose();
  return losses;
}

function trainsLikeTheCpu(device: string, ready: () => Promise<unknown>, done = () => {}) {
  test.each([
    ['float32', 1e-4],
    ['bfloat16', 0.05],
  ] as const)(
    '%s: the losses of three AdamW steps follow the CPU backend',
    { timeout: 600_000 },
    async (dtype, tol) => {
      await ready();
      try {
        const cpu = trainingLosses('cpu', dtype);
        const cuda = trainingLosses(device, dtype);
        for (let i = 0; i < cpu.length; i++)
          expect(Math.abs(cuda[i] - cpu[i]), `step ${i + 1}`).toBeLessThan(tol);
        expect(cpu[2]).toBeLessThan(cpu[0]); // and it trains
      } finally {
        if (dtype === 'bfloat16') done();
      }
    },
  );
}

describe('a TransformerLM training step on the emulated cuda backend', () => {
  if (emulator.registered)
    trainsLikeTheCpu(
      'cuda-emu-lm',
      () => initBackend('cuda-emu-lm'),
      () => emulator.cleanup(),
    );
  else test.skip('g++ not found: the emulated cuda run is skipped', () => {});
});

describe('a TransformerLM training step on the GPU (cuda)', () => {
  if (gpu) trainsLikeTheCpu('cuda', async () => {});
  else test.skip('no CUDA driver or NVRTC: the GPU run is skipped', () => {});
});
