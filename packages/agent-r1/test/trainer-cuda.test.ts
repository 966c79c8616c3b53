/**
 * The agent's training run on the cuda backend: a warm start and RL steps (rollouts with the KV cache,
 * GRPO updates with a KL penalty) of a tiny policy must give the CPU backend's losses. It runs on the tensor
 * package's CUDA emulator (each generated kernel built as host C++ behind the real launchers; skipped with
 * one line without g++). The batch masks, advantages and log-probs the losses read are made on the host:
 * this checks that they reach the policy's device.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerEmulatedCuda } from '../../tensor/test/cuda/emulator/emulator.js';
import { expectSameRun, runTinyAgent } from './support/tiny-agent-run.js';

const emulator = registerEmulatedCuda('cuda-emu-agent');
const root = mkdtempSync(join(tmpdir(), 'agent-r1-cuda-'));
afterAll(() => {
  emulator.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!emulator.registered)('the agent trainer on cuda (emulated)', () => {
  it("gives the CPU's warm-start losses and RL metrics", async () => {
    const cpu = await runTinyAgent(root, 'cpu');
    const cuda = await runTinyAgent(root, 'cuda-emu-agent');
    expect(cuda.warmStart).toHaveLength(3);
    expect(cuda.rl).toHaveLength(2);
    expectSameRun(cpu, cuda, 4);
  }, 300_000);
});
if (!emulator.registered) console.log('trainer-cuda: no g++, the emulated cuda run is skipped');
