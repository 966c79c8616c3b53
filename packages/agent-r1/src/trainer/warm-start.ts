/**
 * The supervised warm start stage: scripted demonstrations, then `sft.steps` optimizer steps on batches
 * of similar length (less padding: attention costs grow with the square of the padded length), drawn
 * from a seeded order, with its own checkpoint (`<checkpoint.dir>/warm-start`) so that an interrupted
 * stage resumes where it stopped, exactly.
 */
import { join } from 'node:path';
import { AdamW, type TransformerLM, WeightAverage, saveCheckpoint } from '@agent-r1/nn';
import { agentFiles } from '../checkpoints/agent-files.js';
import { Generator } from '@agent-r1/tensor';
import type { Trajectory } from '../mdp/trajectory.js';
import type { AgentTask } from '../tasks/task.js';
import type { StepTracer } from './kernel-trace-log.js';
import type { TrainConfig } from './config.js';
import {
  type Demonstration,
  demonstrationTexts,
  encodeDemonstration,
  recordDemonstration,
  rewriteDemonstration,
} from './demonstrations.js';
import { lrMultiplier } from './lr-schedule.js';
import { openMetricsLog } from './metrics-log.js';
import { randomPermutation, repeatCounts } from './permutation.js';
import { createProgress } from './progress.js';
import { sftStep } from './sft.js';
import { resumeStage } from '../checkpoints/stage-checkpoint.js';

/** Batches drawn at once before sorting by length: large enough to group lengths, small enough to mix. */
const POOL_BATCHES = 8;

/** Draws of new names per renamed demonstration before it is kept as it was (when none fits the limits). */
const RENAME_TRIES = 4;

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

export const WARM_START_METRICS = 'warm-start.jsonl';

/** The warm start's checkpoint folder: the policy the RL stage starts from. */
export function warmStartDir(config: Pick<TrainConfig, 'checkpoint'>): string {
  return join(config.checkpoint.dir, 'warm-start');
}

interface WarmStartState {
  step: number;
  /** Set once the finished stage wrote its weight average into the model (`sft.emaDecay`). */
  averaged?: boolean;
}

export async function warmStart<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  policy: TransformerLM,
  log: (line: string) => void,
  tracer: StepTracer | null = null,
): Promise<void> {
  const { sft, rollout: limits } = config;
  if (sft.steps === 0) return;
  if (!task.scripted)
    throw new Error(`config: "sft.steps" is ${sft.steps} but task "${task.name}" has no scripted policy`);
  const started = performance.now();
  const optimizer = new AdamW(policy.parameters(), { lr: sft.lr, weightDecay: config.train.weightDecay });
  const average =
    sft.emaDecay > 0 ? new WeightAverage(policy.parameters(), { decay: sft.emaDecay }) : undefined;
  const release = () => {
    optimizer.dispose();
    average?.dispose();
  };
  const dir = warmStartDir(config);
  const resumed = await resumeStage<WarmStartState>(
    config,
    {
      label: 'warm start',
      dir,
      steps: sft.steps,
      parts: { model: policy, optimizer, average },
      // A stage that finished with a weight average saved the average alone: its output, not a point to
      // continue training from.
      check: (saved) => {
        if (saved.averaged && saved.step < sft.steps)
          throw new Error(
            `warm start: ${dir} finished at step ${saved.step} and holds the average of its weights (sft.emaDecay); it cannot be continued to ${sft.steps} steps: use another checkpoint.dir, or checkpoint.resume=false to start over`,
          );
      },
    },
    log,
  );
  if (resumed === 'complete') {
    release();
    return;
  }
  let state: WarmStartState = resumed ?? { step: 0 };
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
  // Its own stream (seed + 2), so that the warm start's batches do not shift the RL stage's draws. It is
  // not checkpointed: a resumed stage replays the (cheap) draws of the passes and steps it skips instead.
  const generator = new Generator(config.seed + 2);
  /** Demonstration i, renamed with the task's chance (up to RENAME_TRIES draws that fit, else as it was). */
  const drawCopy = (i: number): Trajectory => {
    if (!renaming || generator.random() >= renameChance) return original[i];
    const { example, demo } = recorded[i];
    const texts = demonstrationTexts(demo);
    for (let attempt = 0; attempt < RENAME_TRIES; attempt++) {
      const { apply } = task.renameEntities!(example, texts, generator);
      const renamed = rewriteDemonstration(demo, task.codec, limits, apply);
      if (renamed) return renamed;
    }
    return original[i];
  };
  /** One pass's trajectories: each demonstration as many times as its kind's weight says, each copy drawn anew. */
  const pass = (): Trajectory[] =>
    repeatCounts(weights, generator).flatMap((copies, i) =>
      Array.from({ length: copies }, () => drawCopy(i)),
    );
  const files = agentFiles(config, task, policy);
  const save = () => saveCheckpoint(dir, { model: policy, optimizer, average, state, files });
  const metrics = openMetricsLog(config.log.dir, { fileName: WARM_START_METRICS, fromStep: state.step + 1 });
  // Called with the 1-based step: the first step already runs at lr / warmupSteps.
  const lrScale = lrMultiplier(sft);
  const progress = createProgress({ label: 'warm start', mode: config.log.progress });
  progress.start(sft.steps, {}, state.step);
  let demos: Trajectory[] = [];
  let queue: number[][] = [];
  for (let step = 0; step < sft.steps; step++) {
    if (queue.length === 0) {
      demos = pass();
      queue = lengthBucketedBatches(
        demos.map((d) => d.tokens.length),
        sft.batchSize,
        generator,
        sft.bucketByLength,
      );
    }
    const batch = queue.shift()!;
    if (step < state.step) continue;
    const lr = sft.lr * lrScale(step + 1);
    tracer?.begin('warm-start', step + 1);
    const result = await sftStep(
      policy,
      optimizer,
      batch.map((i) => demos[i]),
      {
        microBatchSize: config.train.microBatchSize,
        gradClip: config.train.gradClip,
        contextWeight: sft.contextWeight,
        lr,
      },
    );
    tracer?.end('warm-start', step + 1);
    average?.update();
    state = { step: step + 1 };
    metrics.append(step + 1, {
      sftLoss: result.loss,
      sftLr: lr,
      ...(Number.isNaN(result.contextLoss) ? {} : { sftContextLoss: result.contextLoss }),
    });
    progress.update(step + 1, { loss: result.loss });
    if (config.checkpoint.every > 0 && (step + 1) % config.checkpoint.every === 0) await save();
  }
  progress.stop();
  metrics.close();
  if (average) {
    average.copyToParams();
    state = { ...state, averaged: true };
    await saveCheckpoint(dir, { model: policy, state, files });
  } else await save();
  release();
  const seconds = (performance.now() - started) / 1000;
  log(`warm start: ${sft.steps} steps on ${recorded.length} demonstrations in ${seconds.toFixed(0)} s`);
}
