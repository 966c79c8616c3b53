/**
 * `log.traceKernels` / `log.traceSteps`: the trainer writes a trace of the chosen RL steps' kernel calls,
 * one parseable call a line; two runs of one seed give the same trace, another seed a divergent one; a bad
 * step range is a config error naming the key.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBackend, matmul, ones, registerBackend, tidy } from '@agent-r1/tensor';
import { type TracedCall, firstDivergence, parseTracedCall } from '@agent-r1/tensor/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { resolveConfig } from '../src/trainer/config.js';
import { traceStepRange } from '../src/trainer/config-schema.js';
import { kernelTraceLog } from '../src/trainer/kernel-trace-log.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { TINY_MODEL } from './support/tiny-model.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-trace-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function config(name: string, extra: string[]) {
  return resolveConfig({
    overrides: [
      'task=reveal',
      ...TINY_MODEL,
      'rollout.n=4',
      'rollout.maxTurns=2',
      'rollout.maxTokensPerTurn=4',
      'rollout.maxLength=16',
      'rollout.maxObservationTokens=4',
      'sft.steps=0',
      'train.steps=3',
      'train.promptsPerStep=2',
      'train.miniBatchSize=8',
      'train.microBatchSize=8',
      'eval.every=0',
      'eval.examples=4',
      `checkpoint.dir=${join(root, name, 'ckpt')}`,
      'checkpoint.every=0',
      `log.dir=${join(root, name)}`,
      'log.progress=none',
      `log.traceKernels=${join(root, `${name}.trace`)}`,
      ...extra,
    ],
  });
}

async function tracedRun(name: string, extra: string[] = []): Promise<TracedCall[]> {
  const c = config(name, extra);
  await trainAgent(c, await createTask(c));
  return readFileSync(c.log.traceKernels, 'utf8').trim().split('\n').map(parseTracedCall);
}

describe('log.traceKernels', () => {
  it('traces the chosen steps; the same seed gives the same trace, another seed parts from it', async () => {
    const two = await tracedRun('a', ['log.traceSteps=2']);
    const again = await tracedRun('b', ['log.traceSteps=2']);
    expect(two.length).toBeGreaterThan(50);
    expect(two.some((c) => c.kernel === 'matmul')).toBe(true);
    expect(firstDivergence(two, again)).toBeNull();
    expect(again.length).toBe(two.length);
    // Steps 2-3 hold step 2's calls and more; another seed's step 2 differs.
    const twoThree = await tracedRun('c', ['log.traceSteps=2-3']);
    expect(twoThree.length).toBeGreaterThan(two.length);
    expect(firstDivergence(two, twoThree)).toBeNull();
    const otherSeed = await tracedRun('d', ['log.traceSteps=2', 'seed=1']);
    expect(firstDivergence(two, otherSeed)).not.toBeNull();
  });

  it('traces warm-start steps when log.traceStage says so (and then no RL step)', async () => {
    const stage = ['log.traceStage=warm-start', 'sft.steps=3', 'sft.demonstrations=8', 'sft.batchSize=8'];
    const second = await tracedRun('w1', [...stage, 'log.traceSteps=2']);
    const again = await tracedRun('w2', [...stage, 'log.traceSteps=2']);
    const both = await tracedRun('w3', [...stage, 'log.traceSteps=2-3']);
    expect(second.length).toBeGreaterThan(20);
    expect(firstDivergence(second, again)).toBeNull();
    expect(again.length).toBe(second.length);
    expect(both.length).toBeGreaterThan(second.length);
    // Only the chosen stage's steps are traced.
    const c = config('stage', ['log.traceStage=warm-start', 'log.traceSteps=2']);
    const tracer = kernelTraceLog(c);
    const kernelCall = () => tidy(() => matmul(ones([4, 4]), ones([4, 4])).dataSync());
    for (const [stage, step] of [
      ['rl', 2],
      ['warm-start', 1],
      ['warm-start', 3],
    ] as const) {
      tracer?.begin(stage, step);
      kernelCall();
      tracer?.end(stage, step);
    }
    expect(readFileSync(c.log.traceKernels, 'utf8')).toBe('');
    tracer?.begin('warm-start', 2);
    kernelCall();
    tracer?.end('warm-start', 2);
    kernelCall();
    tracer?.close();
    // One matmul (the call inside step 2; not the one after it), and the fills that made its inputs.
    const kernels = readFileSync(c.log.traceKernels, 'utf8')
      .trim()
      .split('\n')
      .map((line) => parseTracedCall(line).kernel);
    expect(kernels.filter((k) => k === 'matmul')).toHaveLength(1);
    expect(() => config('bad-stage', ['log.traceStage=sft'])).toThrow(/log\.traceStage/);
  });

  it('a backend that cannot be traced stops the run before it trains, naming the backend', () => {
    const c = config('f', []);
    const { readSync, ...rest } = getBackend('cpu');
    registerBackend('untraceable', { ...rest, name: 'untraceable' });
    expect(() => kernelTraceLog({ ...c, backend: 'untraceable' })).toThrow(/untraceable backend cannot read/);
    expect(existsSync(c.log.traceKernels)).toBe(false);
  });

  it('a step range that is not "first-last" or one step is an error naming log.traceSteps', () => {
    expect(traceStepRange('')).toEqual([1, Number.POSITIVE_INFINITY]);
    expect(traceStepRange('7')).toEqual([7, 7]);
    expect(traceStepRange(' 3 - 5 ')).toEqual([3, 5]);
    for (const bad of ['0', '5-3', 'x', '2-', '-2'])
      expect(() => config('e', [`log.traceSteps=${bad}`])).toThrow(/log\.traceSteps/);
  });
});
