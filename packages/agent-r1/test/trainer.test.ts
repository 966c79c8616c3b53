import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import type { StepMetrics } from '../src/trainer/rl-step.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { TINY_MODEL } from './support/tiny-model.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-trainer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function config(
  name: string,
  steps: number,
  resume: boolean,
  algorithm = 'grpo',
  extra: string[] = [],
): TrainConfig {
  return resolveConfig({
    overrides: [
      ...extra,
      'task=reveal',
      // One thread: the resumed runs below must equal the straight ones to the bit.
      'threads=1',
      `algorithm.name=${algorithm}`,
      'algorithm.klCoef=0.01',
      ...TINY_MODEL,
      'rollout.n=4',
      'rollout.maxTurns=3',
      'rollout.maxTokensPerTurn=4',
      'rollout.maxLength=16',
      'rollout.maxObservationTokens=4',
      'sft.steps=5',
      'sft.demonstrations=16',
      'sft.batchSize=16',
      `train.steps=${steps}`,
      'train.promptsPerStep=4',
      'train.miniBatchSize=8',
      'train.microBatchSize=4',
      'train.ppoEpochs=2',
      'eval.every=0',
      'eval.examples=8',
      `checkpoint.dir=${join(root, name, 'ckpt')}`,
      'checkpoint.every=2',
      `checkpoint.resume=${resume}`,
      `log.dir=${join(root, name)}`,
      'log.progress=none',
    ],
  });
}

const strip = (ms: StepMetrics[]) =>
  ms.map(({ rolloutSeconds, prepareSeconds, updateSeconds, tokensPerSecond, ...rest }) => rest);

describe('trainAgent', () => {
  it.each([
    ['grpo', []],
    ['ppo', []],
    ['grpo', ['algorithm.filterGroups=true']],
  ])(
    '%s %j: resuming from a checkpoint continues exactly as an uninterrupted run',
    async (algorithm, extra) => {
      const task = await createTask(config('x', 1, false));
      const name = `${algorithm}${extra.length ? '-filter' : ''}`;
      const straight = await trainAgent(config(`${name}-straight`, 4, false, algorithm, extra), task);
      const first = await trainAgent(config(`${name}-resumed`, 2, false, algorithm, extra), task);
      const second = await trainAgent(config(`${name}-resumed`, 4, true, algorithm, extra), task);
      expect(second.steps).toBe(2);
      expect(strip([...first.metrics, ...second.metrics])).toEqual(strip(straight.metrics));
      for (const r of [straight, first, second]) r.policy.dispose();
    },
    120_000,
  );

  it('writes metrics, the curves plot and a checkpoint', async () => {
    const c = config('outputs', 2, false);
    const task = await createTask(c);
    const result = await trainAgent(c, task);
    const lines = readFileSync(join(c.log.dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).step)).toEqual([1, 2]);
    expect(readFileSync(join(c.log.dir, 'curves.svg'), 'utf8')).toContain('<svg');
    for (const f of [
      'policy/model.safetensors',
      'policy/optimizer.safetensors',
      'policy/state.json',
      // The KL reference is saved in the policy's folder, so the two are always of one step.
      'policy/reference.model.safetensors',
    ]) {
      expect(existsSync(join(c.checkpoint.dir, f)), f).toBe(true);
    }
    expect(result.evaluations).toHaveLength(1);
    result.policy.dispose();
  }, 60_000);

  it('dynamic sampling: each step keeps up to promptsPerStep informative groups, drawing more until the round cap', async () => {
    const extra = ['algorithm.filterGroups=true', 'algorithm.maxSampleRounds=2'];
    const c = config('filter', 3, false, 'grpo', extra);
    const result = await trainAgent(c, await createTask(c));
    for (const m of result.metrics) {
      // A second round is drawn exactly when the first did not fill the step; it can only add groups.
      expect(m.sampleRounds).toBe(m.informativeGroups >= 1 ? 1 : 2);
      expect(m.keptGroups).toBeGreaterThanOrEqual(m.informativeGroups);
      expect(m.keptGroups).toBeLessThanOrEqual(1);
    }
    expect(result.metrics.some((m) => m.informativeGroups < 1)).toBe(true);
    result.policy.dispose();
  }, 60_000);

  it("refuses another task's options, naming the key and the task", async () => {
    expect(() => config('balance', 1, false, 'grpo', ['taskOptions.balanceKinds.rl=1'])).toThrow(
      'config: unknown key "taskOptions.balanceKinds": task "reveal" has no options',
    );
  });

  it('names an unknown task', async () => {
    await expect(createTask({ ...config('bad', 1, false), task: 'nope' })).rejects.toThrow(
      /unknown task "nope"; registered: reveal, secret-number, multihop-qa/,
    );
  });
});
