import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Generator } from '@agent-r1/tensor';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { AgentTask } from '../src/tasks/task.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import { readMetrics } from '../src/trainer/metrics-log.js';
import { buildPolicy } from '../src/trainer/models.js';
import { PRETRAIN_METRICS, drawWindows, pretrain, tokenStream } from '../src/trainer/pretrain.js';
import { interrupt } from './support/interruptible-sft.js';

// sftStep made to throw after some steps: an interrupted run.
vi.mock('../src/trainer/sft.js', async (importOriginal) =>
  (await import('./support/interruptible-sft.js')).interruptible(await importOriginal()),
);

const root = mkdtempSync(join(tmpdir(), 'agent-r1-pretrain-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Characters as tokens 1…; 0 ends a text. */
const ALPHABET = ' abcdefghijklmnopqrstuvwxyz.,';
const codec = {
  encode: (text: string) =>
    [...text].map((ch) => {
      const id = ALPHABET.indexOf(ch);
      if (id < 0) throw new Error(`no token for ${JSON.stringify(ch)}`);
      return id + 1;
    }),
  decode: (ids: ArrayLike<number>) => Array.from(ids, (id) => (id === 0 ? '|' : ALPHABET[id - 1])).join(''),
};

const CAPITALS = [
  ['france', 'paris'],
  ['spain', 'madrid'],
  ['peru', 'lima'],
  ['kenya', 'nairobi'],
  ['chile', 'santiago'],
  ['japan', 'tokyo'],
];
const TEXTS = CAPITALS.map(([country, capital]) => `the capital of ${country} is ${capital}.`);

/** The trainer's view of a task that has texts to pretrain on and nothing else. */
function textTask(texts: readonly string[] | undefined): AgentTask {
  return {
    name: 'capitals',
    train: [],
    validation: [],
    makeEnv: () => {
      throw new Error('not used');
    },
    codec,
    vocabSize: ALPHABET.length + 1,
    stopTokens: [0],
    stopStrings: [],
    ...(texts ? { pretrainTexts: () => texts } : {}),
  };
}

function config(name: string, steps: number, resume: boolean, extra: string[] = []): TrainConfig {
  return resolveConfig({
    overrides: [
      'model.dModel=32',
      'model.layers=1',
      'model.heads=2',
      'model.kvHeads=1',
      'model.maxLength=32',
      'rollout.maxLength=32',
      'rollout.maxTokensPerTurn=8',
      'rollout.maxObservationTokens=8',
      `pretrain.steps=${steps}`,
      'pretrain.batchSize=6',
      'pretrain.length=24',
      'pretrain.lr=0.01',
      'train.microBatchSize=4',
      'checkpoint.every=2',
      `checkpoint.dir=${join(root, name, 'ckpt')}`,
      `checkpoint.resume=${resume}`,
      `log.dir=${join(root, name)}`,
      'log.progress=none',
      ...extra,
    ],
  });
}

async function run(name: string, steps: number, resume: boolean, extra: string[] = []) {
  const c = config(name, steps, resume, extra);
  const task = textTask(TEXTS);
  const policy = buildPolicy(c, task.vocabSize);
  const lines: string[] = [];
  try {
    await pretrain(c, task, policy, (l) => lines.push(l));
    return {
      c,
      lines,
      weights: [...policy.namedParameters()].map(([n, p]) => [n, Array.from(p.dataSync())]),
    };
  } finally {
    policy.dispose();
  }
}

/** Each step's loss and rate (the wall-clock fields differ between runs). */
const metrics = (c: TrainConfig) =>
  readMetrics(join(c.log.dir, PRETRAIN_METRICS)).map(({ step, pretrainLoss, pretrainLr }) => ({
    step,
    pretrainLoss,
    pretrainLr,
  }));

describe('tokenStream and drawWindows', () => {
  it('lays the texts end to end, each followed by the separator', () => {
    const stream = tokenStream(['ab', '', 'c.'], codec, 0);
    expect(codec.decode(stream)).toBe('ab||c.|');
    expect(codec.decode(tokenStream(['ab', 'c'], codec))).toBe('abc');
  });

  it('draws windows that are slices of the stream, every offset possible, the same for a seed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 1000 }),
        (length, extra, seed) => {
          const stream = Int32Array.from({ length: length + extra }, (_, i) => i);
          const windows = drawWindows(stream, length, 64, new Generator(seed));
          expect(drawWindows(stream, length, 64, new Generator(seed))).toEqual(windows);
          for (const w of windows) {
            expect(w).toHaveLength(length);
            // Consecutive values: a slice starting at w[0], which is a valid start.
            expect(w).toEqual(Array.from({ length }, (_, i) => w[0] + i));
            expect(w[0]).toBeLessThanOrEqual(extra);
          }
        },
      ),
      { numRuns: 100 },
    );
    const stream = Int32Array.from({ length: 12 }, (_, i) => i);
    const starts = new Set(drawWindows(stream, 10, 400, new Generator(1)).map((w) => w[0]));
    expect([...starts].sort()).toEqual([0, 1, 2]);
  });
});

describe('pretrain', () => {
  it('lowers the next-token loss on the texts', async () => {
    const { c, lines } = await run('learns', 60, false);
    const losses = metrics(c).map((m) => m.pretrainLoss);
    expect(losses).toHaveLength(60);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // Uniform over 30 tokens is ln 30 = 3.4 nats; the texts are mostly a fixed template.
    expect(mean(losses.slice(0, 5))).toBeGreaterThan(2.5);
    expect(mean(losses.slice(-10))).toBeLessThan(0.6 * mean(losses.slice(0, 5)));
    expect(lines.at(-1)).toMatch(/pretrain: 60 steps on \d+ tokens of 6 texts/);
  }, 120_000);

  it('resumes an interrupted stage exactly, and loads a finished one instead of training again', async () => {
    const straight = await run('straight', 6, false);
    Object.assign(interrupt, { afterSteps: 5, done: 0 }); // the checkpoint of step 4 (checkpoint.every=2) survives
    await expect(run('resumed', 6, false)).rejects.toThrow(/interrupted/);
    interrupt.afterSteps = Number.POSITIVE_INFINITY;
    const resumed = await run('resumed', 6, true);
    expect(resumed.lines[0]).toMatch(/resumed from .* at step 4/);
    expect(resumed.weights).toEqual(straight.weights);
    expect(metrics(resumed.c)).toEqual(metrics(straight.c));
    const again = await run('resumed', 6, true);
    expect(again.lines).toEqual([expect.stringMatching(/is complete \(step 6\)/)]);
    expect(again.weights).toEqual(straight.weights);
  }, 120_000);

  it('follows pretrain.schedule and warmupSteps', async () => {
    const { c } = await run('schedule', 4, false, [
      'pretrain.warmupSteps=2',
      'pretrain.schedule=linear',
      'pretrain.minLrRatio=0.5',
    ]);
    const rates = metrics(c).map((m) => m.pretrainLr);
    const expected = [0.005, 0.01, 0.0075, 0.005];
    for (const [i, r] of expected.entries()) expect(rates[i]).toBeCloseTo(r, 12);
    expect(rates).toHaveLength(4);
  });

  it('does nothing at 0 steps, and stops with the culprit named on bad input', async () => {
    const c = config('errors', 2, false);
    const policy = buildPolicy(c, ALPHABET.length + 1);
    try {
      await pretrain(config('off', 0, false), textTask(undefined), policy, () => {});
      await expect(pretrain(c, textTask(undefined), policy, () => {})).rejects.toThrow(
        /"pretrain.steps" is 2 but task "capitals" has no texts/,
      );
      await expect(pretrain(c, textTask(['too short.']), policy, () => {})).rejects.toThrow(
        /1 texts make 11 tokens, fewer than "pretrain.length" \(24\)/,
      );
    } finally {
      policy.dispose();
    }
    expect(() => config('long', 1, false, ['pretrain.length=64'])).toThrow(
      /pretrain\.length.*64.*model\.maxLength.*32/,
    );
    expect(config('long-but-off', 0, false, ['pretrain.length=64']).pretrain.length).toBe(64);
  });
});
