/**
 * The CPU backend hands out reused wasm memory without clearing it (tensor's wasm/arena.ts): every kernel
 * writes all of its output and the op layer fills what a kernel accumulates into. Here a small multihop run
 * (warm start, then GRPO with rollouts through the KV cache) gives the same bits when every block of the wasm
 * memory is filled with NaN as it is handed out and as it is given back, freed blocks held back from reuse
 * (64 MiB of them), so no kernel, layer or cache reads memory it did not write, or a tensor already freed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { poisonWasmMemory, wasmKernelsEnabled, wasmMemoryInfo } from '@agent-r1/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { prepareBackend } from '../src/trainer/backend-setup.js';
import { resolveConfig } from '../src/trainer/config.js';
import { trainAgent } from '../src/trainer/trainer.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-poison-'));
afterAll(() => {
  poisonWasmMemory(false);
  rmSync(root, { recursive: true, force: true });
});

async function run(name: string, poison: boolean) {
  const config = resolveConfig({
    preset: 'multihop',
    overrides: [
      'model.dModel=32',
      'model.layers=1',
      'model.heads=2',
      'model.kvHeads=1',
      'sft.steps=2',
      'sft.demonstrations=8',
      'sft.batchSize=4',
      'train.steps=2',
      'train.promptsPerStep=2',
      'rollout.n=2',
      'train.miniBatchSize=4',
      'train.microBatchSize=4',
      'eval.every=0',
      'log.progress=none',
      'checkpoint.every=0',
      `checkpoint.dir=${join(root, name, 'ckpt')}`,
      `log.dir=${join(root, name)}`,
    ],
  });
  await prepareBackend(config);
  const task = await createTask(config);
  poisonWasmMemory(poison, { holdBackBytes: 64 * 2 ** 20 });
  try {
    const result = await trainAgent(config, task);
    const weights = [...result.policy.namedParameters()].map(([n, p]) => [n, Array.from(p.dataSync())]);
    // Everything but the timings.
    const metrics = result.metrics.map((m) =>
      Object.entries(m).filter(([key]) => !/Seconds$|PerSecond$/.test(key)),
    );
    result.policy.dispose();
    return { weights, metrics };
  } finally {
    poisonWasmMemory(false);
  }
}

describe('reused memory filled with NaN', () => {
  it('changes nothing in a warm start and two GRPO steps of a small multihop policy', async () => {
    const plain = await run('plain', false);
    expect(wasmKernelsEnabled()).toBe(true);
    // The second run reuses what the first gave back.
    expect(wasmMemoryInfo().top).toBeGreaterThan(0);
    const poisoned = await run('poisoned', true);
    expect(poisoned.metrics).toEqual(plain.metrics);
    expect(poisoned.weights).toEqual(plain.weights);
    expect(plain.weights.flatMap(([, w]) => w as number[]).every(Number.isFinite)).toBe(true);
  }, 120_000);
});
