/**
 * The policy model trained on the cuda backend's kernels without a GPU: the tensor package's CUDA emulator
 * (each generated kernel built as host C++ and run behind the real launchers) hosts a small TransformerLM
 * with a copy head, moved there with `module.to`, for three AdamW steps, in float32 and in bfloat16; the
 * losses must follow the CPU backend's. Every primitive is checked on its own in the tensor package; this
 * checks that a whole training step composes them as the CPU does. Skips with one line without g++.
 */
import { type FloatDType, crossEntropy, initBackend, registerBackend, tensor, tidy } from '@agent-r1/tensor';
import { describe, expect, test } from 'vitest';
import { createEmulatedCudaBackend, findGxx } from '../../tensor/test/cuda/emulator/emulator.js';
import { AdamW, TransformerLM } from '../src/index.js';

const gxx = findGxx();
let cleanup = () => {};
if (gxx)
  registerBackend('cuda-emu-lm', async () => {
    const backend = await createEmulatedCudaBackend('cuda-emu-lm');
    cleanup = backend.cleanup;
    return backend;
  });

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

describe.skipIf(!gxx)('a TransformerLM training step on the emulated cuda backend', () => {
  test.each([
    ['float32', 1e-5],
    ['bfloat16', 0.05],
  ] as const)(
    '%s: the losses of three AdamW steps follow the CPU backend',
    { timeout: 600_000 },
    async (dtype, tol) => {
      await initBackend('cuda-emu-lm');
      try {
        const cpu = trainingLosses('cpu', dtype);
        const cuda = trainingLosses('cuda-emu-lm', dtype);
        for (let i = 0; i < cpu.length; i++)
          expect(Math.abs(cuda[i] - cpu[i]), `step ${i + 1}`).toBeLessThan(tol);
        expect(cpu[2]).toBeLessThan(cpu[0]); // and it trains
      } finally {
        if (dtype === 'bfloat16') cleanup();
      }
    },
  );
});
if (!gxx)
  describe('a TransformerLM training step on the emulated cuda backend', () => {
    test.skip('g++ not found: the emulated cuda run is skipped', () => {});
  });
