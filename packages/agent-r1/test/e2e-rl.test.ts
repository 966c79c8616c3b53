/**
 * End to end: a tiny policy, warm-started on scripted demonstrations (half of them use the tool, half guess),
 * then trained with each RL algorithm on the reveal task. The reward rises as the policy learns to call the
 * tool and to repeat what it returned. Seeded: the run is the same every time on the CPU backend.
 */
import { AdamW, TransformerLM } from '@agent-r1/nn';
import { Generator, noGrad, tensor, tidy } from '@agent-r1/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { type AlgorithmName, resolveConfig } from '../src/trainer/config.js';
import { demonstrate } from '../src/trainer/demonstrations.js';
import { type StepMetrics, rlStep } from '../src/trainer/rl-step.js';
import { sftStep } from '../src/trainer/sft.js';
import { RevealEnv, STOP_TOKENS, WORDS, codec, demoPolicy, examples } from '../src/tasks/reveal/index.js';

const limits = { maxTurns: 3, maxTokensPerTurn: 4, maxLength: 16, maxObservationTokens: 4 };
const modelConfig = {
  vocabSize: WORDS.length,
  dModel: 32,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  maxLength: 16,
  valueHead: true,
  seed: 0,
};
const train = examples(256, 1);
const warmStart = new Map<string, Float32Array>();

/** A policy holding the warm-start weights. */
function warmPolicy(): TransformerLM {
  const policy = new TransformerLM(modelConfig);
  noGrad(() => {
    for (const [name, p] of policy.namedParameters())
      tidy(() => p.copy_(tensor(warmStart.get(name)!, { shape: p.shape })));
  });
  return policy;
}

async function runRl(name: AlgorithmName, steps: number, seed: number): Promise<StepMetrics[]> {
  const policy = warmPolicy();
  const base = resolveConfig({ overrides: [`algorithm.name=${name}`, 'algorithm.klCoef=0', `seed=${seed}`] });
  const config = {
    ...base,
    rollout: { ...base.rollout, ...limits, n: 8, temperature: 1, topK: 0, topP: 1 },
    train: { ...base.train, miniBatchSize: 64, microBatchSize: 64 },
  };
  const ctx = {
    config,
    policy,
    optimizer: new AdamW(policy.parameters(), { lr: 3e-4, weightDecay: 0 }),
    reference: null,
    critic: null,
    criticOptimizer: null,
    codec,
    makeEnv: () => new RevealEnv(),
    stopTokens: STOP_TOKENS,
    stopStrings: [],
    answerMetrics: ['em'],
    generator: new Generator(seed),
  };
  const metrics: StepMetrics[] = [];
  for (let s = 0; s < steps; s++) {
    const batch = train.slice((s * 8) % train.length, ((s * 8) % train.length) + 8);
    metrics.push((await rlStep(ctx, batch, 3e-4)).metrics);
  }
  ctx.optimizer.dispose();
  policy.dispose();
  return metrics;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

beforeAll(async () => {
  const policy = new TransformerLM(modelConfig);
  const optimizer = new AdamW(policy.parameters(), { lr: 3e-3, weightDecay: 0 });
  const demos = await Promise.all(
    train
      .slice(0, 64)
      .map((ex, i) => demonstrate(new RevealEnv(), ex, demoPolicy(i % 2 === 0, (i * 7) % 10), codec, limits)),
  );
  for (let step = 0; step < 150; step++)
    await sftStep(policy, optimizer, demos, { microBatchSize: 64, gradClip: 1 });
  for (const [name, p] of policy.namedParameters()) warmStart.set(name, Float32Array.from(p.dataSync()));
  optimizer.dispose();
  policy.dispose();
}, 120_000);

describe.each<AlgorithmName>(['grpo', 'ppo', 'reinforce++'])('%s on the reveal task', (name) => {
  it('raises the reward and the tool-use rate', async () => {
    const m = await runRl(name, 40, 1);
    const early = m.slice(0, 8);
    const late = m.slice(-8);
    const summary = {
      rewardEarly: mean(early.map((x) => x.reward)),
      rewardLate: mean(late.map((x) => x.reward)),
      toolsEarly: mean(early.map((x) => x.toolCalls)),
      toolsLate: mean(late.map((x) => x.toolCalls)),
    };
    console.log(name, JSON.stringify(summary));
    expect(summary.rewardLate).toBeGreaterThan(summary.rewardEarly + 0.1);
    expect(summary.toolsLate).toBeGreaterThan(0.9);
  }, 120_000);
});

describe('reproducibility', () => {
  it('the same seed gives the same metrics', async () => {
    const [a, b] = [await runRl('grpo', 3, 5), await runRl('grpo', 3, 5)];
    const strip = (m: StepMetrics[]) =>
      m.map(({ rolloutSeconds, prepareSeconds, updateSeconds, tokensPerSecond, ...rest }) => rest);
    expect(strip(a)).toEqual(strip(b));
  }, 60_000);
});
