/**
 * The RL stage's weight average (`train.emaDecay`): training itself is unchanged, the output is the
 * bias-corrected average of the steps' weights, and it resumes with an interrupted run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import type { StepMetrics } from '../src/trainer/rl-step.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { tinyRun } from './support/tiny-model.js';
import { expectMovingAverage } from './support/weight-average.js';

// rlStep made to throw after some steps: an interrupted run.
const interrupt = vi.hoisted(() => ({ afterSteps: Number.POSITIVE_INFINITY, done: 0 }));
vi.mock('../src/trainer/rl-step.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/trainer/rl-step.js')>();
  return {
    ...original,
    rlStep: (...args: Parameters<typeof original.rlStep>) => {
      if (++interrupt.done > interrupt.afterSteps) throw new Error('interrupted');
      return original.rlStep(...args);
    },
  };
});

const root = mkdtempSync(join(tmpdir(), 'agent-r1-rl-average-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const decay = 0.6;
const config = (name: string, steps: number, resume: boolean, extra: string[] = []): TrainConfig =>
  resolveConfig({
    overrides: [
      ...tinyRun(join(root, name)),
      `train.steps=${steps}`,
      // A constant rate from the first step: a run stopped after k steps took the k first steps of a longer one.
      'train.warmupSteps=0',
      'eval.examples=4',
      'checkpoint.every=2',
      `checkpoint.resume=${resume}`,
      ...extra,
    ],
  });

const run = async (name: string, steps: number, resume: boolean, extra: string[] = []) => {
  const c = config(name, steps, resume, extra);
  const lines: string[] = [];
  const result = await trainAgent(c, await createTask(c), { log: (l) => lines.push(l) });
  const weights = [...result.policy.namedParameters()].map(
    ([name, p]) => [name, Array.from(p.dataSync())] as const,
  );
  result.policy.dispose();
  return { metrics: result.metrics, evaluations: result.evaluations, weights, lines };
};

const strip = (ms: StepMetrics[]) =>
  ms.map(({ rolloutSeconds, prepareSeconds, updateSeconds, tokensPerSecond, ...rest }) => rest);

describe('the RL weight average (train.emaDecay)', () => {
  const ema = [`train.emaDecay=${decay}`];

  it('ends with the bias-corrected average of the steps’ weights, the steps themselves unchanged', async () => {
    const iterates: Awaited<ReturnType<typeof run>>['weights'][] = [];
    for (let k = 1; k <= 4; k++) iterates.push((await run(`iterate-${k}`, k, false)).weights);
    const plain = await run('plain', 4, false);
    const averaged = await run('averaged', 4, false, ema);
    expect(strip(averaged.metrics)).toEqual(strip(plain.metrics));
    expectMovingAverage(averaged.weights, iterates, decay);
    expect(averaged.weights).not.toEqual(iterates[3]);
    // The validation after the last step is the average's, and says so.
    expect(averaged.lines).toContain(
      `rl: the policy is the average of its weights over 4 steps (train.emaDecay ${decay})`,
    );
    expect(averaged.lines.some((l) => l.startsWith('eval @4 (weight average): '))).toBe(true);
  }, 120_000);

  it('resumes the average with an interrupted run; a finished run is its average and cannot be continued', async () => {
    const straight = await run('ema-straight', 6, false, ema);
    Object.assign(interrupt, { afterSteps: 5, done: 0 }); // the checkpoint of step 4 (checkpoint.every=2) survives
    await expect(run('ema-resumed', 6, false, ema)).rejects.toThrow(/interrupted/);
    interrupt.afterSteps = Number.POSITIVE_INFINITY;
    const resumed = await run('ema-resumed', 6, true, ema);
    expect(resumed.lines.some((l) => /resumed from .* at step 4/.test(l))).toBe(true);
    expect(resumed.weights).toEqual(straight.weights);
    expect(strip(resumed.metrics)).toEqual(strip(straight.metrics.slice(4)));
    // Resumed when finished: the saved average, not averaged again.
    expect((await run('ema-resumed', 6, true, ema)).weights).toEqual(straight.weights);
    await expect(run('ema-resumed', 8, true, ema)).rejects.toThrow(
      /finished at step 6 and holds the average .*train\.emaDecay.* cannot be continued to 8 steps/,
    );
  }, 120_000);

  it('refuses a decay of 1 or more, naming the key', () => {
    expect(() => config('bad', 1, false, ['train.emaDecay=1'])).toThrow(/train\.emaDecay.*\[0, 1\)/);
  });
});
