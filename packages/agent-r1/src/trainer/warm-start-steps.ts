/**
 * The warm start's work, apart from its checkpoint, logs and progress bar (./warm-start.ts): the scripted
 * demonstrations played in the task's environment and encoded as the rollout engine lays out episodes, the
 * seeded passes over them in batches of similar length (less padding: attention costs grow with the square
 * of the padded length), each copy renamed with the task's chance, and one optimizer step on a batch. No
 * file here: a web page trains a policy with the same steps.
 */
import { AdamW, type TransformerLM, WeightAverage } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import type { Trajectory } from '../mdp/trajectory.js';
import { parseNamedFactors } from '../options/named-factors.js';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from './config-definition.js';
import {
  type Demonstration,
  demonstrationTexts,
  encodeDemonstration,
  recordDemonstration,
  renamedDemonstration,
} from './demonstrations.js';
import { lrMultiplier } from './lr-schedule.js';
import { randomPermutation, repeatCounts } from './permutation.js';
import { type SftStepResult, sftStep } from './sft.js';

/** Batches drawn at once before sorting by length: large enough to group lengths, small enough to mix. */
const POOL_BATCHES = 8;

/**
 * One pass over the demonstrations as batches of indices: a seeded permutation, cut into pools of
 * POOL_BATCHES batches, each pool sorted by length (unless `byLength` is false) and cut into batches, and
 * the batches shuffled. The generator draws the same numbers either way.
 */
export function lengthBucketedBatches(
  lengths: readonly number[],
  batchSize: number,
  generator: Generator,
  byLength = true,
): number[][] {
  const order = randomPermutation(lengths.length, generator);
  const batches: number[][] = [];
  const pool = batchSize * POOL_BATCHES;
  for (let start = 0; start < order.length; start += pool) {
    const drawn = order.slice(start, start + pool);
    const sorted = byLength ? drawn.sort((a, b) => lengths[a] - lengths[b] || a - b) : drawn;
    for (let b = 0; b < sorted.length; b += batchSize) batches.push(sorted.slice(b, b + batchSize));
  }
  return randomPermutation(batches.length, generator).map((i) => batches[i]);
}

/** The outcome reward a demonstration earned. */
function outcome(demo: Demonstration): number {
  return demo.turns.flatMap((t) => t.rewards).reduce((s, r) => s + (r.kind === 'outcome' ? r.value : 0), 0);
}

/** The warm start's training data: how many demonstrations it trains on, and each step's batch in turn. */
export interface WarmStartData {
  /** Demonstrations trained on (all of them, or those that earned a reward with `sft.successfulOnly`). */
  demonstrations: number;
  /** The next step's batch; the first call gives step 1's. */
  nextBatch(): Trajectory[];
}

/**
 * Plays the task's scripted policy on its first `sft.demonstrations` training examples and returns the
 * batches of the stage's steps, drawn from their own generator (seed + 2), so that the warm start's
 * batches do not shift the RL stage's draws.
 */
export async function warmStartData<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  log: (line: string) => void = () => {},
): Promise<WarmStartData> {
  const { sft, rollout: limits } = config;
  if (!task.scripted)
    throw new Error(`config: "sft.steps" is ${sft.steps} but task "${task.name}" has no scripted policy`);
  const recorded: { example: E; demo: Demonstration }[] = [];
  const examples = task.train.slice(0, sft.demonstrations);
  if (examples.length < sft.demonstrations)
    log(
      `warm start: sft.demonstrations is ${sft.demonstrations} but task "${task.name}" has ${examples.length} training examples; demonstrating those`,
    );
  for (const [i, example] of examples.entries()) {
    const demo = await recordDemonstration(
      task.makeEnv(),
      example,
      task.scripted(example, i),
      task.codec,
      limits,
    );
    if (!sft.successfulOnly || outcome(demo) > 0) recorded.push({ example, demo });
  }
  if (recorded.length === 0)
    throw new Error(`warm start: none of the ${examples.length} demonstrations earned an outcome reward`);
  checkToolWeights(
    sft,
    recorded.flatMap(({ demo }) => demo.toolCalls.map((c) => c.name)),
  );
  if (recorded.length < examples.length)
    log(`warm start: ${recorded.length} of ${examples.length} demonstrations succeeded; training on those`);
  const original = recorded.map(({ demo }) => encodeDemonstration(demo, task.codec, limits));
  const tooLong = original.findIndex((t) => t.tokens.length > limits.maxLength);
  if (tooLong >= 0)
    throw new Error(
      `warm start: demonstration ${tooLong} has ${original[tooLong].tokens.length} tokens, more than rollout maxLength ${limits.maxLength}`,
    );
  const renameChance = task.renameChance?.('warm-start') ?? 0;
  const renaming = renameChance > 0 && task.renameEntities !== undefined;
  const weights =
    task.exampleWeights?.(
      'warm-start',
      recorded.map(({ example }) => example),
    ) ?? recorded.map(() => 1);
  // Not checkpointed: a resumed stage replays the (cheap) draws of the passes and steps it skips instead.
  const generator = new Generator(config.seed + 2);
  /** Demonstration i, renamed with the task's chance (`renamedDemonstration`; as it was where none fits). */
  const drawCopy = (i: number): Trajectory => {
    if (!renaming || generator.random() >= renameChance) return original[i];
    const { example, demo } = recorded[i];
    const texts = demonstrationTexts(demo);
    const draw = (fit?: 'no-longer') => task.renameEntities!(example, texts, generator, 'warm-start', fit);
    return renamedDemonstration(demo, task.codec, limits, draw, sft.renameToFit)?.trajectory ?? original[i];
  };
  /** One pass's trajectories: each demonstration as many times as its kind's weight says, each copy drawn anew. */
  const pass = (): Trajectory[] =>
    repeatCounts(weights, generator).flatMap((copies, i) =>
      Array.from({ length: copies }, () => drawCopy(i)),
    );
  let demos: Trajectory[] = [];
  let queue: number[][] = [];
  return {
    demonstrations: recorded.length,
    nextBatch() {
      if (queue.length === 0) {
        demos = pass();
        queue = lengthBucketedBatches(
          demos.map((d) => d.tokens.length),
          sft.batchSize,
          generator,
          sft.bucketByLength,
        );
      }
      return queue.shift()!.map((i) => demos[i]);
    },
  };
}

/** `sft.toolWeights` parsed: factor by tool name. */
function toolWeightsOf(sft: TrainConfig['sft']): Map<string, number> {
  return parseNamedFactors(sft.toolWeights, 'sft.toolWeights', 'tool');
}

/** A weighted tool that no demonstration calls is a misspelt name or the wrong task: an error naming it. */
function checkToolWeights(sft: TrainConfig['sft'], called: readonly string[]): void {
  const tools = new Set(called);
  for (const name of toolWeightsOf(sft).keys())
    if (!tools.has(name))
      throw new Error(
        `sft.toolWeights: no demonstration calls tool '${name}' (they call: ${[...tools].sort().join(', ') || 'none'})`,
      );
}

/** The warm start's optimizer, and the average of its weights when `sft.emaDecay` asks for one. */
export interface WarmStartOptimizers {
  optimizer: AdamW;
  average?: WeightAverage;
  dispose(): void;
}

export function warmStartOptimizers(config: TrainConfig, policy: TransformerLM): WarmStartOptimizers {
  const { sft } = config;
  const optimizer = new AdamW(policy.parameters(), { lr: sft.lr, weightDecay: config.train.weightDecay });
  const average =
    sft.emaDecay > 0 ? new WeightAverage(policy.parameters(), { decay: sft.emaDecay }) : undefined;
  return {
    optimizer,
    average,
    dispose: () => {
      optimizer.dispose();
      average?.dispose();
    },
  };
}

/**
 * Step `step` (1-based) of the warm start on `batch`: the learning rate of the stage's schedule (the first
 * step already runs at lr / warmupSteps), one `sftStep`, and the weight average's update. After the last
 * step, `average.copyToParams()` makes the policy the average.
 */
export async function warmStartStep(
  config: TrainConfig,
  policy: TransformerLM,
  optimizers: Pick<WarmStartOptimizers, 'optimizer' | 'average'>,
  batch: readonly Trajectory[],
  step: number,
): Promise<SftStepResult & { lr: number }> {
  const { sft } = config;
  const lr = sft.lr * lrMultiplier(sft)(step);
  const result = await sftStep(policy, optimizers.optimizer, batch, {
    microBatchSize: config.train.microBatchSize,
    gradClip: config.train.gradClip,
    contextWeight: sft.contextWeight,
    answerWeight: sft.answerWeight,
    decisionWeight: sft.decisionWeight,
    toolWeights: toolWeightsOf(sft),
    dropout: sft.dropout > 0 ? { p: sft.dropout, generator: dropoutGenerator(config.seed, step) } : undefined,
    lr,
  });
  optimizers.average?.update();
  return { ...result, lr };
}

/** Counters a step's dropout masks may use: far more than any batch's activations. */
const DROPOUT_COUNTERS_PER_STEP = 2 ** 32;

/**
 * The generator of step `step`'s dropout masks: one stream (seed + 5), each step from its own block of
 * counters, so that a resumed stage draws the masks it would have drawn without saving a generator.
 */
function dropoutGenerator(seed: number, step: number): Generator {
  const generator = new Generator(seed + 5);
  generator.take((step - 1) * DROPOUT_COUNTERS_PER_STEP);
  return generator;
}
