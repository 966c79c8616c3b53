/**
 * The training configuration: a typed tree with defaults, named presets, JSON or YAML files and
 * `key.sub=value` command-line overrides, merged as defaults ← preset ← file ← overrides and validated
 * against a small schema. Every error names the full key path, e.g.
 * `config: unknown key "train.lrr" (did you mean "train.lr"?)` or
 * `config: "rollout.n" must be an integer >= 1, got 0`.
 */

export type Activation = 'swiglu' | 'gelu';
export type NormKind = 'rms' | 'layer';
export type AlgorithmName = 'grpo' | 'ppo' | 'reinforce++' | 'reinforce++-baseline' | 'rloo';
export type KlType = 'k1' | 'k3' | 'low_var_kl';
export type LossAggregation = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean';
export type LrSchedule = 'constant' | 'cosine' | 'linear';
export type CpuKernels = 'wasm' | 'typescript';
/** 'auto': a live bar on a TTY, periodic log lines otherwise; 'bar' / 'lines' force one; 'none' is silent. */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface ModelConfig {
  dModel: number;
  layers: number;
  heads: number;
  /** Key/value heads (grouped-query attention); must divide `heads`. */
  kvHeads: number;
  /** MLP hidden size; absent: the model's default for the activation. */
  ffnHidden?: number;
  maxLength: number;
  activation: Activation;
  norm: NormKind;
  tiedEmbeddings: boolean;
  /**
   * A copy head: the output mixes in attention over the context's tokens, so that a small policy can repeat
   * names it has only just read (see @agent-r1/nn's CopyHead).
   */
  copyHead: boolean;
  /** The copy head also weighs exact token matches with the context (see @agent-r1/nn's CopyHead). */
  copyMatch: boolean;
  /** The match evidence's weights depend on each query's hidden state (see @agent-r1/nn's CopyHead). */
  copyMatchGate: boolean;
  /** The copy head's gate also reads the tokens its attention points at (see @agent-r1/nn's CopyHead). */
  copySourceGate: boolean;
}

export interface CriticConfig {
  /** A value head on the policy's trunk (true) or a separate critic model (false). */
  shareTrunk: boolean;
}

export interface RolloutConfig {
  /** Samples (trajectories) per prompt: the group size of GRPO / RLOO. */
  n: number;
  maxTurns: number;
  maxTokensPerTurn: number;
  /** Most tokens in a whole trajectory (prompt + actions + observations); at most `model.maxLength`. */
  maxLength: number;
  maxObservationTokens: number;
  /** Sampling temperature; 0 samples greedily. */
  temperature: number;
  /** 0 turns top-k off. */
  topK: number;
  /** 1 turns nucleus sampling off. */
  topP: number;
  /**
   * How many of each prompt's `n` samples in RL decode greedily, as evaluation does, so that the greedy
   * policy's answer is in every group and its mistakes get a negative advantage (self-critical sequence
   * training uses the greedy answer as a baseline instead); 0 turns it off.
   */
  greedySamples: number;
}

export interface AlgorithmConfig {
  name: AlgorithmName;
  gamma: number;
  /** GAE λ. */
  lambda: number;
  /** Divide group-relative advantages by the group's standard deviation (GRPO). */
  normalizeStd: boolean;
  clipRatio: number;
  /** Upper clip ratio (clip-higher); equal to `clipRatio` for the symmetric PPO clip. */
  clipRatioHigh: number;
  /** Dual-clip constant c > 1 for negative advantages; 0 turns dual clipping off. */
  dualClip: number;
  klCoef: number;
  klType: KlType;
  /** Put the KL penalty into the reward (true) or into the loss (false). */
  klInReward: boolean;
  entropyCoef: number;
  /** Value-function clip range; 0 turns value clipping off. */
  valueClip: number;
  valueCoef: number;
  aggregation: LossAggregation;
  /** Train only on tokens the policy generated (mask out prompts and observations). */
  useActionMask: boolean;
  /** Per-turn (process) rewards in addition to the final outcome reward. */
  processRewards: boolean;
  /**
   * Dynamic sampling (DAPO): update only on groups whose rewards differ (the others have zero advantage
   * under GRPO and RLOO), rolling out more prompts to refill the step's groups.
   */
  filterGroups: boolean;
  /** With filterGroups: rollout rounds per step at most (the first included). */
  maxSampleRounds: number;
}

export interface TrainLoopConfig {
  steps: number;
  promptsPerStep: number;
  ppoEpochs: number;
  /** Trajectories per optimizer step. */
  miniBatchSize: number;
  /** Trajectories per forward/backward pass (gradient accumulation within a mini-batch). */
  microBatchSize: number;
  lr: number;
  criticLr: number;
  weightDecay: number;
  /** Global gradient-norm clip; 0 turns clipping off. */
  gradClip: number;
  warmupSteps: number;
  schedule: LrSchedule;
  /** The multiplier of `lr` a decaying schedule ends at (0: it decays to nothing). */
  minLrRatio: number;
  /**
   * Chance that a step's example is played with its entities renamed (one renaming per group; tasks with
   * `renameEntities` only): the warm start's `sft.renameEntities`, for RL. 0 never, 1 always.
   */
  renameEntities: number;
  /**
   * Draw RL prompts only from training examples in these results-table groups, comma-separated (multi-hop
   * QA: hop counts, e.g. '2,3'); '' draws from all of them.
   */
  groups: string;
  /**
   * Draw RL prompts with the task's kinds of example balanced (`kindOf` tasks only): a kind's share goes as
   * (its count)^(1 - balanceKinds); 0 keeps the data's mix, 1 draws every kind equally often.
   */
  balanceKinds: number;
  /**
   * Multiplies named kinds' shares of the RL prompts after balancing: `kind=factor`, comma-separated (e.g.
   * 'compare_area=2'); '' none. A kind no training example has is an error.
   */
  kindBoost: string;
}

export interface PretrainConfig {
  /**
   * Optimizer steps of language-model pretraining before the warm start: next-token prediction on the
   * task's plain texts (`AgentTask.pretrainTexts`); 0 skips the stage.
   */
  steps: number;
  /** Windows of text per step. */
  batchSize: number;
  /** Tokens per window (at most `model.maxLength`). */
  length: number;
  lr: number;
  warmupSteps: number;
  schedule: LrSchedule;
  minLrRatio: number;
}

export interface SftConfig {
  /** Optimizer steps of the supervised warm start on scripted demonstrations; 0 skips it. */
  steps: number;
  /** Demonstrations (episodes of the scripted policy) to train on. */
  demonstrations: number;
  batchSize: number;
  lr: number;
  /** Steps of linear learning-rate warmup. */
  warmupSteps: number;
  /** After the warmup: 'constant', or a decay to `minLrRatio` × lr at the last step ('cosine', 'linear'). */
  schedule: LrSchedule;
  /** The multiplier of `lr` a decaying schedule ends at. */
  minLrRatio: number;
  /**
   * Weight of the loss on prompt and observation tokens relative to the actions' (0: actions only).
   * Language-model training on the demonstrations, for a policy that starts from random weights.
   */
  contextWeight: number;
  /**
   * Chance that a demonstration is trained on with its entities renamed (drawn afresh each pass over the
   * demonstrations; tasks with `renameEntities` only): 0 never, 1 always. Teaches copying names from the
   * context instead of recalling the training set's.
   */
  renameEntities: number;
  /** `train.balanceKinds` for the demonstrations: how often each kind comes up in a pass over them. */
  balanceKinds: number;
  /** `train.kindBoost` for the demonstrations. */
  kindBoost: string;
  /**
   * Train only on demonstrations that earned a positive outcome reward: a scripted policy's failures
   * (a missed retrieval, a wrong guess) are not worth imitating.
   */
  successfulOnly: boolean;
  /**
   * Decay of an exponential moving average of the weights kept through the stage (0: none). With one,
   * the stage's policy (the checkpoint RL starts from) is the average, not the last step's weights.
   */
  emaDecay: number;
}

export interface EvalConfig {
  /** Evaluate every this many steps; 0 turns periodic evaluation off. */
  every: number;
  /** Validation examples of the periodic evaluation. */
  examples: number;
  /** Whether an RL run ends with the results table on the test split (where the task has one). */
  table: boolean;
  /** Test examples of the results table (0: the whole test split). */
  testExamples: number;
  /** A JSONL file of test questions (`{"question", "golden_answers"}`) replacing the task's test split. */
  questions: string;
  /** A JSONL corpus (`{"id", "contents"}`) replacing the task's retrieval corpus. */
  corpus: string;
}

export interface CheckpointConfig {
  dir: string;
  /** Save every this many steps; 0 saves only at the end. */
  every: number;
  /** Resume from the latest checkpoint in `dir` when there is one. */
  resume: boolean;
}

/** The training stages whose steps `log.traceKernels` can trace. */
export type TraceStage = 'rl' | 'warm-start' | 'pretrain';

export interface LogConfig {
  /** Where metrics.jsonl and the plots go. */
  dir: string;
  progress: ProgressMode;
  /**
   * A file to write a trace of every kernel call of the steps `traceSteps` of stage `traceStage` to, one
   * call a line (`traceKernels` of @agent-r1/tensor/testing; `agent-r1 compare-traces` compares two); ''
   * off.
   */
  traceKernels: string;
  /** The steps to trace: "first-last", or one step; '' every step. */
  traceSteps: string;
  /** The stage whose steps are traced. */
  traceStage: TraceStage;
}

export interface TrainConfig {
  seed: number;
  /** A policy checkpoint folder to start from (e.g. a warm start's); '' starts from random weights. */
  init: string;
  /**
   * A tensor backend name ('cpu', 'cuda', or one registered by the host; the agent needs one that reads
   * synchronously, which 'webgpu' cannot), or 'auto': CUDA where it loads, else the CPU (`npm run train`).
   */
  backend: string;
  /** On the CPU backend: WebAssembly SIMD kernels ('wasm', the default) or the plain TypeScript ones. */
  cpuKernels: CpuKernels;
  /** Threads of the CPU kernels, the main thread included; 0: the machine's (at most 8). */
  threads: number;
  task: string;
  model: ModelConfig;
  critic: CriticConfig;
  rollout: RolloutConfig;
  algorithm: AlgorithmConfig;
  pretrain: PretrainConfig;
  sft: SftConfig;
  train: TrainLoopConfig;
  eval: EvalConfig;
  checkpoint: CheckpointConfig;
  log: LogConfig;
}

/** A partial config: what presets, files and overrides contain. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
export type PartialTrainConfig = DeepPartial<TrainConfig>;

/** The defaults: a tiny model that trains on a CPU in minutes. */
export const DEFAULT_CONFIG: TrainConfig = {
  seed: 0,
  init: '',
  backend: 'cpu',
  cpuKernels: 'wasm',
  threads: 0,
  task: 'reveal',
  model: {
    dModel: 64,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    maxLength: 512,
    activation: 'swiglu',
    norm: 'rms',
    tiedEmbeddings: true,
    copyHead: false,
    copyMatch: false,
    copyMatchGate: false,
    copySourceGate: false,
  },
  critic: { shareTrunk: true },
  rollout: {
    n: 4,
    maxTurns: 4,
    maxTokensPerTurn: 48,
    maxLength: 512,
    maxObservationTokens: 128,
    temperature: 1,
    topK: 0,
    topP: 1,
    greedySamples: 0,
  },
  algorithm: {
    name: 'grpo',
    gamma: 1,
    lambda: 1,
    normalizeStd: true,
    clipRatio: 0.2,
    clipRatioHigh: 0.2,
    dualClip: 3,
    klCoef: 0.001,
    klType: 'low_var_kl',
    klInReward: false,
    entropyCoef: 0,
    valueClip: 0.2,
    valueCoef: 0.5,
    aggregation: 'token-mean',
    useActionMask: true,
    processRewards: false,
    filterGroups: false,
    maxSampleRounds: 3,
  },
  train: {
    steps: 200,
    promptsPerStep: 8,
    ppoEpochs: 1,
    miniBatchSize: 16,
    microBatchSize: 8,
    lr: 3e-4,
    criticLr: 1e-3,
    weightDecay: 0,
    gradClip: 1,
    warmupSteps: 10,
    schedule: 'constant',
    minLrRatio: 0,
    renameEntities: 0,
    groups: '',
    balanceKinds: 0,
    kindBoost: '',
  },
  pretrain: {
    steps: 0,
    batchSize: 16,
    length: 128,
    lr: 3e-3,
    warmupSteps: 0,
    schedule: 'constant',
    minLrRatio: 0,
  },
  sft: {
    steps: 0,
    demonstrations: 64,
    batchSize: 16,
    lr: 3e-3,
    warmupSteps: 0,
    schedule: 'constant',
    minLrRatio: 0,
    contextWeight: 0,
    renameEntities: 0,
    balanceKinds: 0,
    kindBoost: '',
    successfulOnly: false,
    emaDecay: 0,
  },
  eval: { every: 25, examples: 64, table: true, testExamples: 0, questions: '', corpus: '' },
  checkpoint: { dir: 'runs/agent-r1/checkpoints', every: 50, resume: false },
  log: { dir: 'runs/agent-r1', progress: 'auto', traceKernels: '', traceSteps: '', traceStage: 'rl' },
};

export { presets } from './config-presets.js';
export { ConfigError, closest, validateConfig, validatePartialConfig } from './config-schema.js';
export {
  mergeConfig,
  loadConfigFile,
  parseOverrideValue,
  parseOverrides,
  type ResolveConfigOptions,
  resolveConfig,
  configKeys,
} from './config-resolve.js';
