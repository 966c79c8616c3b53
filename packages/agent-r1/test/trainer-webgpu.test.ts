/**
 * The agent's training run on the webgpu backend, whose reads are promises: the rollouts (each sampled
 * token's logits read back), the copy head (given its token ids from the host), the warm start and the
 * GRPO updates (their losses and gradient norm read back) must give the CPU backend's numbers. In CI it
 * runs on Mesa's llvmpipe (REQUIRE_WEBGPU=1 there makes a missing adapter a failure); elsewhere it skips
 * with one line when no adapter is found.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDevice } from '../../tensor/test/cross-backend/device.js';
import { expectSameRun, runTinyAgent } from './support/tiny-agent-run.js';

const available = await acquireDevice('webgpu');
const root = mkdtempSync(join(tmpdir(), 'agent-r1-webgpu-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The copy head (with its match and source gates) is on: it indexes by token on the host.
const COPY_HEAD = ['model.copyHead=true', 'model.copyMatch=true', 'model.copySourceGate=true'];

describe.skipIf(!available)('the agent trainer on webgpu', () => {
  it("gives the CPU's warm-start losses and RL metrics", async () => {
    const cpu = await runTinyAgent(root, 'cpu', COPY_HEAD);
    const gpu = await runTinyAgent(root, 'webgpu', COPY_HEAD);
    expect(gpu.warmStart).toHaveLength(3);
    expect(gpu.rl).toHaveLength(2);
    expectSameRun(cpu, gpu, 4);
  }, 300_000);
});
