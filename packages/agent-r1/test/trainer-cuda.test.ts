/**
 * The agent's training run on the cuda backend: a warm start and RL steps (rollouts with the KV cache,
 * GRPO updates with a KL penalty) of a tiny policy must give the CPU backend's losses. It runs on the tensor
 * package's CUDA emulator (each generated kernel built as host C++ behind the real launchers; skipped with
 * one line without g++). The batch masks, advantages and log-probs the losses read are made on the host:
 * this checks that they reach the policy's device.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { registerEmulatedCuda } from '../../tensor/test/cuda/emulator/emulator.js';
import { prepareBackend } from '../src/trainer/backend-setup.js';
import { resolveConfig } from '../src/trainer/config.js';
import { readMetrics } from '../src/trainer/metrics-log.js';
import { createTask } from '../src/tasks/index.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { WARM_START_METRICS } from '../src/trainer/warm-start.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TINY_MODEL } from './support/tiny-model.js';

const emulator = registerEmulatedCuda('cuda-emu-agent');
const root = mkdtempSync(join(tmpdir(), 'agent-r1-cuda-'));
afterAll(() => {
  emulator.cleanup();
  rmSync(root, { recursive: true, force: true });
});

async function run(backend: string) {
  const config = resolveConfig({
    overrides: [
      'task=reveal',
      ...TINY_MODEL,
      'rollout.maxTurns=3',
      'rollout.maxTokensPerTurn=4',
      'rollout.maxLength=16',
      'rollout.maxObservationTokens=4',
      'sft.steps=3',
      'sft.demonstrations=8',
      'sft.batchSize=4',
      'sft.contextWeight=0.5',
      'train.steps=2',
      'train.promptsPerStep=2',
      'train.miniBatchSize=8',
      'train.microBatchSize=4',
      'algorithm.klCoef=0.1',
      'eval.every=0',
      `backend=${backend}`,
      `checkpoint.dir=${join(root, backend, 'checkpoints')}`,
      `log.dir=${join(root, backend)}`,
      'log.progress=none',
    ],
  });
  await prepareBackend(config);
  const result = await trainAgent(config, await createTask(config));
  result.policy.dispose();
  return {
    warmStart: readMetrics(join(config.log.dir, WARM_START_METRICS)).map((m) => [
      m.sftLoss,
      m.sftContextLoss,
    ]),
    rl: result.metrics.map((m) => [m.entropy, m.klLoss, m.gradNorm, m.actionTokens]),
  };
}

describe.skipIf(!emulator.registered)('the agent trainer on cuda (emulated)', () => {
  it("gives the CPU's warm-start losses and RL metrics", async () => {
    const cpu = await run('cpu');
    const cuda = await run('cuda-emu-agent');
    expect(cuda.warmStart).toHaveLength(3);
    expect(cuda.rl).toHaveLength(2);
    for (const key of ['warmStart', 'rl'] as const)
      for (const [i, row] of cpu[key].entries())
        for (const [j, v] of row.entries()) expect(cuda[key][i][j], `${key} ${i} ${j}`).toBeCloseTo(v, 4);
  }, 300_000);
});
if (!emulator.registered) console.log('trainer-cuda: no g++, the emulated cuda run is skipped');
