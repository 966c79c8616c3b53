import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { presets, resolveConfig } from '../src/trainer/config.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { createTask } from '../src/tasks/index.js';

describe('multihop-qa training smoke run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'multihop-train-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has a multihop preset on the multihop-qa task', () => {
    const c = resolveConfig({ preset: 'multihop' });
    expect(c.task).toBe('multihop-qa');
    expect(presets.multihop.rollout?.maxTurns).toBe(4);
  });

  it('warm-starts and takes an RL step on multihop-qa with tiny settings', async () => {
    const config = resolveConfig({
      preset: 'multihop',
      overrides: [
        'model.dModel=16',
        'model.layers=1',
        'model.heads=2',
        'model.kvHeads=1',
        'sft.steps=2',
        'sft.demonstrations=4',
        'sft.batchSize=2',
        'train.steps=1',
        'train.promptsPerStep=1',
        'train.miniBatchSize=2',
        'train.microBatchSize=2',
        'rollout.n=2',
        'rollout.maxTokensPerTurn=8',
        'eval.every=0',
        'eval.examples=2',
        'log.progress=none',
        `log.dir=${join(dir, 'log')}`,
        `checkpoint.dir=${join(dir, 'ck')}`,
        'checkpoint.every=0',
      ],
    });
    const task = await createTask(config);
    const lines: string[] = [];
    const result = await trainAgent(config, task, { log: (s) => lines.push(s) });
    expect(result.steps).toBe(1);
    expect(lines.some((l) => l.startsWith('warm start: 2 steps'))).toBe(true);
    result.policy.dispose();
  });
});
