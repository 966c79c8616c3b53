/**
 * The RL stage's moving parts, apart from its checkpoints, logs and progress bar (./trainer.ts): the
 * optimizer, a separate critic, the KL reference, the seeded generators (rollouts, prompt draws, renamings)
 * and one step: draw the step's prompts (renamed as the task says), take the learning rate of the
 * schedule, run `rlStep`, fold the weights into their average (`train.emaDecay`). No file here: a web page
 * runs the same steps.
 */
import { AdamW, type TransformerLM, WeightAverage } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import { RenamingEnv } from '../mdp/renaming-env.js';
import type { AgentTask, EntityRenaming } from '../tasks/task.js';
import type { TrainConfig } from './config-definition.js';
import type { StepTracer } from './kernel-trace-log.js';
import { lrMultiplier } from './lr-schedule.js';
import { buildCritic, freezeCopy } from './models.js';
import { sampleExamples } from './permutation.js';
import { rlRenamings } from './rl-renaming.js';
import { type RlContext, type StepMetrics, rlStep } from './rl-step.js';

export interface RlRun<E> {
  /** What `rlStep` reads; `ctx.reference` is the KL reference once `startReference` made it. */
  ctx: RlContext<E>;
  optimizer: AdamW;
  critic: TransformerLM | null;
  criticOptimizer: AdamW | null;
  /**
   * The moving average of the policy's weights (`train.emaDecay`; null without one), updated after each
   * step: `average.copyToParams()` after the last step makes the policy the stage's output.
   */
  average: WeightAverage | null;
  /** The generators a checkpoint saves and a resume restores. */
  generators: { rollout: Generator; data: Generator; rename: Generator };
  /** Makes the KL reference a frozen copy of the policy as it is now (the start of RL), if the config has a KL term. */
  startReference(): void;
  /** RL step `step` (1-based); `tracer` traces the step's kernels (the update, not the prompt draws). */
  step(step: number, tracer?: StepTracer | null): Promise<StepMetrics>;
  /** Frees the optimizers, the weight average, the critic and the reference (not the policy). */
  dispose(): void;
}

export function rlRun<E>(config: TrainConfig, task: AgentTask<E>, policy: TransformerLM): RlRun<E> {
  const prompts = task.rlPrompts ?? task.train;
  const promptWeights = task.exampleWeights?.('rl', prompts);
  // A separate critic has the policy's architecture (a pretrained model's, under model.from).
  const critic = buildCritic(config, task.vocabSize, config.model.from === '' ? undefined : policy.config);
  const optimizer = new AdamW(policy.parameters(), {
    lr: config.train.lr,
    weightDecay: config.train.weightDecay,
  });
  const criticOptimizer = critic
    ? new AdamW(critic.parameters(), { lr: config.train.criticLr, weightDecay: config.train.weightDecay })
    : null;
  const average =
    config.train.emaDecay > 0
      ? new WeightAverage(policy.parameters(), { decay: config.train.emaDecay })
      : null;
  const generators = {
    rollout: new Generator(config.seed),
    data: new Generator(config.seed + 1),
    rename: new Generator(config.seed + 3),
  };
  const drawRenamings = rlRenamings(config, task, generators.rename);
  let renamings = new Map<E, EntityRenaming>();
  const ctx: RlContext<E> = {
    config,
    policy,
    optimizer,
    reference: null,
    critic,
    criticOptimizer,
    codec: task.codec,
    makeEnv: drawRenamings
      ? () => new RenamingEnv(task.makeEnv(), (example) => renamings.get(example) ?? null)
      : () => task.makeEnv(),
    stopTokens: task.stopTokens,
    stopStrings: task.stopStrings,
    answerMetrics: task.answerMetrics ?? [],
    generator: generators.rollout,
  };
  const lrScale = lrMultiplier(config.train);
  const draw = () => sampleExamples(prompts, config.train.promptsPerStep, generators.data, promptWeights);
  return {
    ctx,
    optimizer,
    critic,
    criticOptimizer,
    average,
    generators,
    startReference() {
      if (config.algorithm.klCoef <= 0) return;
      ctx.reference?.dispose();
      ctx.reference = freezeCopy(policy);
    },
    async step(step, tracer = null) {
      const examples = draw();
      const lr = config.train.lr * lrScale(step - 1);
      if (drawRenamings) renamings = await drawRenamings(examples);
      // Further prompts for dynamic sampling, renamed like the first ones.
      const drawMore = async () => {
        const more = draw();
        if (drawRenamings) {
          const drawn = await drawRenamings(more);
          for (const example of more) {
            const renaming = drawn.get(example);
            if (renaming) renamings.set(example, renaming);
            else renamings.delete(example);
          }
        }
        return more;
      };
      tracer?.begin('rl', step);
      const { metrics } = await rlStep(ctx, examples, lr, drawMore);
      tracer?.end('rl', step);
      average?.update();
      return metrics;
    },
    dispose() {
      ctx.reference?.dispose();
      critic?.dispose();
      optimizer.dispose();
      criticOptimizer?.dispose();
      average?.dispose();
    },
  };
}
