/** Named partial configs: applied over the defaults and under files and overrides. */
import type { PartialTrainConfig } from './config.js';

/** Episodes of the multi-hop task: up to 3 searches and an answer, 3 documents of 80 characters each. */
const MULTIHOP_ROLLOUT = {
  n: 4,
  maxTurns: 4,
  maxTokensPerTurn: 24,
  maxLength: 384,
  maxObservationTokens: 96,
  temperature: 1,
};

/** Named partial configs, applied over the defaults and under files and overrides. */
export const presets: Record<string, PartialTrainConfig> = {
  /** The defaults as they are. */
  default: {},
  /**
   * The quickstart (`npm run train`): a warm start that mostly guesses, then GRPO on the reveal task with a
   * 17-token vocabulary, where the policy learns to call the tool; under a minute on two cores.
   */
  reveal: {
    task: 'reveal',
    model: { dModel: 32, layers: 2, heads: 4, kvHeads: 2, maxLength: 16 },
    rollout: {
      n: 8,
      maxTurns: 3,
      maxTokensPerTurn: 4,
      maxLength: 16,
      maxObservationTokens: 4,
      temperature: 1,
    },
    algorithm: { name: 'grpo', klCoef: 0 },
    sft: { steps: 150, demonstrations: 128, batchSize: 64, lr: 0.003 },
    train: {
      steps: 40,
      promptsPerStep: 8,
      miniBatchSize: 64,
      microBatchSize: 64,
      lr: 0.0003,
      warmupSteps: 0,
    },
    eval: { every: 20, examples: 100 },
    checkpoint: { dir: 'runs/reveal/checkpoints', every: 20 },
    log: { dir: 'runs/reveal' },
  },
  /**
   * Multi-hop QA with the search tool, the main job (`npm run train`): a policy with a copy head (with
   * match evidence and a source gate: they lift greedy validation EM from 0.18 to 0.45 at 300 steps); a warm
   * start of 1,000 steps (a cosine decay of the rate) on the successful scripted-searcher demonstrations of
   * every training question (actions, plus the context at half weight), nine in ten of them with their
   * entities renamed each pass, so that the policy learns to copy names rather than recall them, and the
   * rare question kinds repeated (kinds balanced halfway); then 40 GRPO steps on every training question,
   * nine in ten renamed the same way, kinds balanced the same way, with a KL penalty to the warm start;
   * then the results table on the test split. Measured time on two cores in docs/results.md.
   */
  multihop: {
    task: 'multihop-qa',
    model: {
      dModel: 64,
      // 3 layers: on data v2 (every bridge fact within the search snippet) they lifted the warm start's EM
      // by 15.4 (validation) and 11.1 (test) points over 2 layers; on v1 they did not (docs/results.md).
      layers: 3,
      heads: 4,
      kvHeads: 2,
      maxLength: 384,
      copyHead: true,
      copyMatch: true,
      copySourceGate: true,
    },
    rollout: MULTIHOP_ROLLOUT,
    // A KL penalty to the warm start (0.1): from the kind-balanced warm start, plain GRPO lowered greedy
    // validation EM (0.876 → 0.835) and lost 3-hop chains; with the penalty it kept validation (0.871) and
    // raised test 2- and 3-hop EM (docs/results.md).
    algorithm: { name: 'grpo', klCoef: 0.1 },
    sft: {
      steps: 1000,
      demonstrations: 2151,
      batchSize: 16,
      lr: 0.01,
      warmupSteps: 20,
      // Decaying to a tenth: the constant rate's loss stalled after ~700 steps and spiked past 1,400 (1,200
      // steps of this schedule did no better than 1,000: docs/results.md).
      schedule: 'cosine',
      minLrRatio: 0.1,
      contextWeight: 0.5,
      renameEntities: 0.9,
      // A kind's share of each pass goes as the square root of its count: 3-hop chains (7% of the
      // demonstrations) get 14%. Full validation EM of the warm start 0.696 → 0.876, 3-hop test EM
      // 0.265 → 0.714; balancing fully (1) did worse (0.594 on the trainer's 128 validation questions).
      balanceKinds: 0.5,
      successfulOnly: true,
    },
    train: {
      steps: 40,
      promptsPerStep: 8,
      miniBatchSize: 16,
      microBatchSize: 8,
      lr: 0.0003,
      warmupSteps: 0,
      // Renamed entities in RL too, nine episodes in ten, on every question: from one warm start, greedy
      // validation EM 0.757 (plain GRPO on the 2- and 3-hop questions, the preset until then), 0.732
      // (renaming, 2- and 3-hop), 0.827 (renaming, every question). Without renaming RL rewards recalling
      // the training countries' capitals, which test's unfamiliar places punish (docs/results.md).
      renameEntities: 0.9,
      balanceKinds: 0.5,
    },
    eval: { every: 20, examples: 128 },
    checkpoint: { dir: 'runs/multihop/checkpoints', every: 10 },
    log: { dir: 'runs/multihop' },
  },
  /**
   * The pipeline of `multihop` in miniature, for CI (`agent-r1 train --preset smoke`): every stage runs
   * (tokenizer, language-model pretraining, warm start, GRPO, the results table) in a couple of minutes; it
   * shows the pipeline works and that reward rises from an untrained policy's, not a target EM.
   */
  smoke: {
    task: 'multihop-qa',
    model: { dModel: 32, layers: 1, heads: 2, kvHeads: 1, maxLength: 384 },
    rollout: MULTIHOP_ROLLOUT,
    algorithm: { name: 'grpo', klCoef: 0 },
    pretrain: { steps: 20, batchSize: 8, length: 64, lr: 0.01 },
    sft: { steps: 200, demonstrations: 96, batchSize: 8, lr: 0.01, warmupSteps: 5, contextWeight: 0.5 },
    train: { steps: 3, promptsPerStep: 2, miniBatchSize: 8, microBatchSize: 8, lr: 0.0003, warmupSteps: 0 },
    eval: { every: 3, examples: 16, testExamples: 24 },
    checkpoint: { dir: 'runs/smoke/checkpoints', every: 0 },
    log: { dir: 'runs/smoke' },
  },
};
