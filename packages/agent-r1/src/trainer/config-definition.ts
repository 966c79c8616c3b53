/**
 * The training configuration, each key defined once (type, default, rule, doc): the types, DEFAULT_CONFIG,
 * the validation and the reference (`agent-r1 keys`, docs/config.md) all derive from this schema. A run's
 * config is merged as defaults ← preset ← file ← overrides and validated (config-resolve.ts); a task's own
 * options live under `taskOptions`, checked against the task's schema. Nothing here reads files or knows
 * the tasks: a web page validates a checkpoint's config with this and ./config-schema.ts alone.
 */
import type { TransformerConfig } from '@agent-r1/nn';
import { KL_ESTIMATORS } from '../algorithms/advantages.js';
import { LOSS_AGGREGATIONS } from '../algorithms/losses.js';
import {
  type Static,
  bool,
  defaultsOf,
  freeObject,
  int,
  num,
  oneOf,
  optionalInt,
  section,
  str,
} from '../options/schema.js';

const SCHEDULES = ['constant', 'cosine', 'linear'] as const;
const scheduleDoc =
  "After the warmup: 'constant', or a decay to `minLrRatio` × lr at the last step ('cosine', 'linear').";

const ModelSchema = section('The policy: a decoder-only transformer (@agent-r1/nn TransformerLM).', {
  from: str(
    '',
    "A Hugging Face causal-LM folder (Llama, Qwen2 / Qwen2.5, Qwen3: config.json, safetensors weights, tokenizer.json and tokenizer_config.json with a chat template) to start from: its architecture and weights replace the shape keys below (dModel to tiedEmbeddings), its tokenizer, chat template and tool-call format the task's own (the task must take a pretrained model: multihop-qa does). '' builds the policy from the keys below with random weights.",
  ),
  chatVariables: freeObject(
    "With model.from: variables its chat template reads besides the conversation, e.g. Qwen3's `enable_thinking` (`model.chatVariables.enable_thinking=false`: no thinking block before each action).",
  ),
  dModel: int(64, 'Width of the residual stream.', { min: 1 }),
  layers: int(2, 'Transformer blocks.', { min: 1 }),
  heads: int(4, 'Attention heads; must divide dModel.', { min: 1 }),
  kvHeads: int(2, 'Key/value heads (grouped-query attention); must divide heads.', { min: 1 }),
  ffnHidden: optionalInt("MLP hidden size; unset: the model's default for the activation.", { min: 1 }),
  maxLength: int(512, 'Longest sequence the model handles (prompt, actions and observations).', { min: 1 }),
  activation: oneOf(['swiglu', 'gelu'], 'swiglu', 'MLP activation.'),
  norm: oneOf(['rms', 'layer'], 'rms', 'RMSNorm or LayerNorm.'),
  tiedEmbeddings: bool(true, 'The output head shares the token embedding.'),
  copyHead: bool(
    false,
    "A copy head: the output mixes in attention over the context's tokens, so that a small policy can repeat names it has only just read (@agent-r1/nn CopyHead).",
  ),
  copyMatch: bool(false, 'The copy head also weighs exact token matches with the context; needs copyHead.'),
  copyMatchSpan: bool(
    false,
    'The copy head also weighs how far back a match goes, so that copying a figure with a repeated digit group does not loop; needs copyMatch.',
  ),
  copySourceGate: bool(
    false,
    "The copy head's gate also reads the tokens its attention points at; needs copyHead.",
  ),
});

const CriticSchema = section('The value function of PPO.', {
  shareTrunk: bool(true, "A value head on the policy's trunk (true) or a separate critic model (false)."),
});

const RolloutSchema = section('Multi-turn rollouts: how trajectories are sampled.', {
  n: int(4, 'Samples (trajectories) per prompt: the group size of GRPO / RLOO.', { min: 1 }),
  maxTurns: int(4, 'Most actions in one trajectory.', { min: 1 }),
  maxTokensPerTurn: int(48, 'Most tokens of one action.', { min: 1 }),
  maxLength: int(
    512,
    'Most tokens in a whole trajectory (prompt + actions + observations); at most model.maxLength.',
    { min: 1 },
  ),
  maxObservationTokens: int(128, 'Most tokens of one tool observation (the rest is cut).', { min: 0 }),
  temperature: num(1, 'Sampling temperature; 0 samples greedily.', { min: 0 }),
  topK: int(0, 'Sample among the k likeliest tokens; 0 turns top-k off.', { min: 0 }),
  topP: num(1, 'Nucleus sampling mass; 1 turns it off.', { above: 0, max: 1 }),
});

const AlgorithmSchema = section('The RL algorithm: advantages and losses.', {
  name: oneOf(['grpo', 'ppo', 'reinforce++', 'reinforce++-baseline', 'rloo'], 'grpo', 'The algorithm.'),
  gamma: num(1, 'Discount factor.', { min: 0, max: 1 }),
  lambda: num(1, 'GAE λ (PPO).', { min: 0, max: 1 }),
  normalizeStd: bool(true, "Divide group-relative advantages by the group's standard deviation (GRPO)."),
  clipRatio: num(0.2, 'PPO clip ratio ε.', { above: 0 }),
  clipRatioHigh: num(0.2, 'Upper clip ratio (clip-higher); equal to clipRatio for the symmetric clip.', {
    above: 0,
  }),
  dualClip: num(3, 'Dual-clip constant c > 1 for negative advantages; 0 turns dual clipping off.'),
  klCoef: num(0.001, 'Weight of the KL penalty to the frozen initial policy; 0 keeps no reference model.', {
    min: 0,
  }),
  klType: oneOf(KL_ESTIMATORS, 'low_var_kl', 'KL estimator.'),
  klInReward: bool(false, 'Put the KL penalty into the reward (true) or into the loss (false).'),
  entropyCoef: num(0, 'Weight of the entropy bonus.', { min: 0 }),
  valueClip: num(0.2, 'Value-function clip range; 0 turns value clipping off.', { min: 0 }),
  valueCoef: num(0.5, 'Weight of the value loss.', { min: 0 }),
  aggregation: oneOf(LOSS_AGGREGATIONS, 'token-mean', 'How per-token losses are averaged.'),
  useActionMask: bool(
    true,
    "Train only on tokens the policy generated (mask out prompts and observations): the paper's action mask.",
  ),
  processRewards: bool(false, 'Per-turn (process) rewards in addition to the final outcome reward.'),
  filterGroups: bool(
    false,
    'Dynamic sampling (DAPO): update only on groups whose rewards differ, rolling out more prompts to refill the step.',
  ),
  maxSampleRounds: int(3, 'With filterGroups: rollout rounds per step at most (the first included).', {
    min: 1,
  }),
});

const TrainLoopSchema = section('The RL stage.', {
  steps: int(200, 'RL steps; 0 skips the stage.', { min: 0 }),
  promptsPerStep: int(8, 'Prompts per step (each rolled out rollout.n times).', { min: 1 }),
  ppoEpochs: int(1, 'Passes over each step’s trajectories.', { min: 1 }),
  miniBatchSize: int(16, 'Trajectories per optimizer step.', { min: 1 }),
  microBatchSize: int(8, 'Trajectories per forward/backward pass (gradient accumulation).', { min: 1 }),
  lr: num(3e-4, 'Learning rate of the policy.', { above: 0 }),
  criticLr: num(1e-3, 'Learning rate of a separate critic.', { above: 0 }),
  weightDecay: num(0, 'AdamW weight decay (every stage).', { min: 0 }),
  gradClip: num(1, 'Global gradient-norm clip (every stage); 0 turns clipping off.', { min: 0 }),
  warmupSteps: int(10, 'Steps of linear learning-rate warmup.', { min: 0 }),
  schedule: oneOf(SCHEDULES, 'constant', scheduleDoc),
  minLrRatio: num(0, 'The multiplier of lr a decaying schedule ends at.', { min: 0, max: 1 }),
  renameToFit: bool(
    false,
    "Where the task renames entities in RL: an episode is renamed only by a renaming under which its scripted demonstration fits the rollout's limits (up to as many draws as the warm start makes, then as many of names no longer in tokens, as `sft.renameToFit` draws), and keeps its own names where none does; without it, every drawn renaming is played, and an observation it lengthens past the limit is cut.",
  ),
  emaDecay: num(
    0,
    "Decay of an exponential moving average of the policy's weights over the RL steps (0: none); with one, the stage's output (its checkpoint and the results table) is the average, while the rollouts and the periodic validation use the weights being trained. A finished stage's checkpoint holds the average, so it cannot be continued to more steps.",
    { min: 0, below: 1 },
  ),
});

const PretrainSchema = section(
  "Optional language-model pretraining on the task's texts (AgentTask.pretrainTexts), before the warm start.",
  {
    steps: int(0, 'Optimizer steps of next-token prediction; 0 skips the stage.', { min: 0 }),
    batchSize: int(16, 'Windows of text per step.', { min: 1 }),
    length: int(128, 'Tokens per window (at most model.maxLength).', { min: 2 }),
    lr: num(3e-3, 'Learning rate.', { above: 0 }),
    warmupSteps: int(0, 'Steps of linear learning-rate warmup.', { min: 0 }),
    schedule: oneOf(SCHEDULES, 'constant', scheduleDoc),
    minLrRatio: num(0, 'The multiplier of lr a decaying schedule ends at.', { min: 0, max: 1 }),
  },
);

const SftSchema = section("The supervised warm start on the task's scripted demonstrations.", {
  steps: int(0, 'Optimizer steps; 0 skips the stage.', { min: 0 }),
  demonstrations: int(64, 'Demonstrations (episodes of the scripted policy) to train on.', { min: 1 }),
  batchSize: int(16, 'Demonstrations per step.', { min: 1 }),
  lr: num(3e-3, 'Learning rate.', { above: 0 }),
  warmupSteps: int(0, 'Steps of linear learning-rate warmup.', { min: 0 }),
  schedule: oneOf(SCHEDULES, 'constant', scheduleDoc),
  minLrRatio: num(0, 'The multiplier of lr a decaying schedule ends at.', { min: 0, max: 1 }),
  contextWeight: num(
    0,
    "Weight of the loss on prompt and observation tokens relative to the actions' (0: actions only): language-model training for a policy that starts from random weights.",
    { min: 0 },
  ),
  answerWeight: num(
    1,
    "Weight of each demonstration's last action (where the answer is) after its first token, relative to its other actions (1: all alike): the answer is a few tokens of an episode, so its share of the loss is small. The first token (the answer tag) is where the policy chooses between answering and calling a tool, and takes `decisionWeight`.",
    { above: 0 },
  ),
  decisionWeight: num(
    1,
    "Weight of each action's first token (a tool's tag or the answer's: where the policy chooses to act again or to answer), relative to the other action tokens (1: all alike).",
    { above: 0 },
  ),
  toolWeights: str(
    '',
    "Weights of the tokens of each action that calls the named tools, after its first token, relative to the other action tokens, as `tool=factor` pairs (`compare=4`; '': all alike): a call whose arguments are copied from far back is a few tokens of an episode. Multiplies `answerWeight` where both apply; a tool no demonstration calls is an error. The multihop preset leaves it off: at `compare=4` its seeds were worse (docs/history.md).",
  ),
  bucketByLength: bool(
    true,
    'Draw each batch from demonstrations of similar length (less padding: attention costs grow with the square of the padded length). Turn it off where length tracks behaviour (in a toy task a guess is shorter than a tool call), so that every batch mixes the behaviours.',
  ),
  successfulOnly: bool(
    false,
    "Train only on demonstrations that earned a positive outcome reward: a scripted policy's failures are not worth imitating.",
  ),
  dropout: num(
    0,
    "Residual dropout in the warm start (the embeddings and each block's attention and MLP outputs), as a probability: a regulariser for a policy trained from scratch on a few thousand demonstrations. RL, rollouts and evaluation never drop.",
    { min: 0, below: 1 },
  ),
  renameToFit: bool(
    false,
    "Where the task renames entities: a demonstration that none of the free renamings fits (renamed, an observation would outgrow the rollout's limit) gets as many draws again, of names no longer in tokens than those they replace (and figures as long), instead of being trained on with its own names, which the policy can then recall rather than copy.",
  ),
  emaDecay: num(
    0,
    "Decay of an exponential moving average of the weights (0: none); with one, the stage's output is the average.",
    { min: 0, below: 1 },
  ),
});

const EvalSchema = section('Evaluation during and after training.', {
  every: int(25, 'Greedy validation every this many RL steps; 0 turns it off.', { min: 0 }),
  examples: int(64, 'Validation examples of the periodic evaluation.', { min: 0 }),
  table: bool(
    true,
    'Whether an RL run ends with the results table on the test split (where the task has one).',
  ),
  testExamples: int(0, 'Test examples of the results table (0: the whole test split).', { min: 0 }),
  temperature: num(
    0,
    "Sampling temperature of the results table's episodes (the test table after training and `agent-r1 eval`); 0 decodes greedily. The periodic validation stays greedy.",
    { min: 0 },
  ),
  samples: int(
    1,
    'Episodes per example in the results table, each figure their mean (pairs of twins compared sample by sample); more than 1 needs eval.temperature above 0, as greedy episodes would repeat.',
    { min: 1 },
  ),
});

const CheckpointSchema = section('Checkpoints.', {
  dir: str('runs/agent-r1/checkpoints', 'Where checkpoints go.', { nonEmpty: true }),
  every: int(50, 'Save every this many steps; 0 saves only at the end.', { min: 0 }),
  resume: bool(false, 'Resume from the latest checkpoint in dir when there is one.'),
});

const LogSchema = section('Logs, progress and kernel traces.', {
  dir: str('runs/agent-r1', 'Where metrics.jsonl and the plots go.', { nonEmpty: true }),
  progress: oneOf(
    ['auto', 'bar', 'lines', 'none'],
    'auto',
    "'auto': a live bar on a TTY, periodic log lines otherwise; 'bar' / 'lines' force one; 'none' is silent.",
  ),
  traceKernels: str(
    '',
    "A file to write every kernel call of the traced steps to (`agent-r1 compare-traces` compares two); '' off.",
  ),
  traceSteps: str('', "The steps to trace: 'first-last', or one step; '' every step."),
  traceStage: oneOf(['rl', 'warm-start', 'pretrain'], 'rl', 'The stage whose steps are traced.'),
});

export const TrainConfigSchema = section('The training configuration.', {
  seed: int(0, 'Seed of every random draw: the same seed gives the same run on the CPU backend.', { min: 0 }),
  init: str(
    '',
    "A policy checkpoint folder to start from (e.g. a warm start's); '' starts from random weights.",
  ),
  backend: str(
    'cpu',
    "A tensor backend ('cpu', 'webgpu', 'cuda', or one registered by the host), or 'auto': CUDA where it loads, else WebGPU where a GPU adapter is found, else the CPU.",
    { nonEmpty: true },
  ),
  cpuKernels: oneOf(
    ['wasm', 'typescript'],
    'wasm',
    "On the CPU backend: WebAssembly SIMD kernels ('wasm') or the plain TypeScript ones.",
  ),
  threads: int(0, "Threads of the CPU kernels, the main thread included; 0: the machine's (at most 8).", {
    min: 0,
  }),
  task: str('reveal', 'The task: a built-in one (reveal, secret-number, multihop-qa) or one registered.', {
    nonEmpty: true,
  }),
  taskOptions: freeObject(
    "The task's own options, checked against its schema (`agent-r1 keys --task <name>`).",
  ),
  model: ModelSchema,
  critic: CriticSchema,
  rollout: RolloutSchema,
  algorithm: AlgorithmSchema,
  train: TrainLoopSchema,
  pretrain: PretrainSchema,
  sft: SftSchema,
  eval: EvalSchema,
  checkpoint: CheckpointSchema,
  log: LogSchema,
});

export type TrainConfig = Static<typeof TrainConfigSchema>;
export type ModelConfig = TrainConfig['model'];
export type CriticConfig = TrainConfig['critic'];
export type RolloutConfig = TrainConfig['rollout'];
export type AlgorithmConfig = TrainConfig['algorithm'];
export type TrainLoopConfig = TrainConfig['train'];
export type PretrainConfig = TrainConfig['pretrain'];
export type SftConfig = TrainConfig['sft'];
export type EvalConfig = TrainConfig['eval'];
export type CheckpointConfig = TrainConfig['checkpoint'];
export type LogConfig = TrainConfig['log'];
export type AlgorithmName = AlgorithmConfig['name'];
export type LrSchedule = TrainLoopConfig['schedule'];
export type CpuKernels = TrainConfig['cpuKernels'];
export type ProgressMode = LogConfig['progress'];
/** The training stages whose steps `log.traceKernels` can trace. */
export type TraceStage = LogConfig['traceStage'];

// The model keys are TransformerLM's own options: a renamed or retyped one there fails to compile here.
type Assignable<_A extends B, B> = true;
export type _ModelKeysAreTransformerOptions = Assignable<ModelConfig, Partial<TransformerConfig>>;

/** A partial config: what presets, files and overrides contain. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
export type PartialTrainConfig = DeepPartial<TrainConfig>;

/** The defaults: a tiny model that trains on a CPU in minutes. */
export const DEFAULT_CONFIG: TrainConfig = defaultsOf(TrainConfigSchema);
