/**
 * @agent-r1/agent — reinforcement learning for tool-using LLM agents (Agent-R1): the MDP, tools and their
 * call formats, the multi-turn rollout engine, advantages and losses (PPO, GRPO, REINFORCE++, RLOO), the
 * trainer, tasks (your own, and the built-in multi-hop QA) and the `agent-r1` command line.
 */
export { normalizeAnswer, exactMatch, f1Score } from './rewards/qa.js';
export type { AgentEnv, EnvFactory, StepResult } from './mdp/env.js';
export { type CallRecord, ToolEnv, type ToolEnvConfig, type ScoreResult } from './mdp/tool-env.js';
export { runTextEpisode, type TextEpisode, type TextPolicy } from './mdp/text-episode.js';
export type { JsonSchema, Tool, ToolResult } from './tools/tool.js';
export { ToolRegistry, unknownToolMessage } from './tools/registry.js';
export { validateArgs, type ValidationResult } from './tools/validate.js';
export {
  type ObservationWrapping,
  type ParsedAction,
  type ToolCall,
  type ToolCallFormat,
  extractTagged,
  parseAnswer,
} from './tools/formats/format.js';
export { type ChatTools, type ChatToolsOptions, chatTools } from './tools/formats/chat.js';
export { HermesFormat, type HermesOptions } from './tools/formats/hermes.js';
export { TagsFormat, type TagMapping, type TagsFormatOptions } from './tools/formats/tags.js';
export {
  LOOKUP_TOOL,
  makeLookupTool,
  makeSecretNumberTask,
  scriptedAction,
  secretNumberQuestion,
  secretNumberTagsFormat,
  type SecretNumberExample,
  type SecretNumberTask,
  type SecretNumberTaskOptions,
} from './tasks/secret-number/index.js';
export {
  buildBatch,
  rowsToTensor,
  type BatchOptions,
  type TrajectoryBatch,
} from './algorithms/batch.js';
export {
  type TokenRows,
  type WhitenOptions,
  explainedVariance,
  maskedCount,
  maskedMean,
  maskedStd,
  maskedSum,
  maskedVar,
  maskedWhiten,
} from './algorithms/metrics.js';
export {
  type AdvantageInputs,
  type AdvantageResult,
  type GaeOptions,
  type GroupAdvantageInputs,
  type GrpoOptions,
  type KlEstimator,
  type KlPenaltyOptions,
  type KlPenaltyResult,
  type ReinforcePlusPlusOptions,
  applyKlPenalty,
  broadcastToActions,
  computeGaeAdvantages,
  computeGrpoAdvantages,
  computeReinforcePlusPlusAdvantages,
  computeReinforcePlusPlusBaselineAdvantages,
  computeRlooAdvantages,
  klEstimate,
  sequenceScores,
} from './algorithms/advantages.js';
export {
  type EntropyOptions,
  type KlLossOptions,
  type LossAggregation,
  type LossMaskOptions,
  type MaskCounts,
  type PpoLossOptions,
  type PpoLossResult,
  type ValueLossOptions,
  type ValueLossResult,
  aggregateLoss,
  klDivergence,
  klLoss,
  lossMask,
  maskCounts,
  policyEntropy,
  ppoLoss,
  tokenEntropy,
  valueLoss,
} from './algorithms/losses.js';
export {
  type AlgorithmConfig,
  type AlgorithmName,
  type CheckpointConfig,
  type CriticConfig,
  type DeepPartial,
  type EvalConfig,
  type LogConfig,
  type LrSchedule,
  type ModelConfig,
  type PartialTrainConfig,
  type PretrainConfig,
  type ProgressMode,
  type ResolveConfigOptions,
  type RolloutConfig,
  type SftConfig,
  type TrainConfig,
  type TrainLoopConfig,
  ConfigError,
  DEFAULT_CONFIG,
  TrainConfigSchema,
  configKeys,
  loadConfigFile,
  mergeConfig,
  parseOverrides,
  parseOverrideValue,
  presets,
  resolveConfig,
  validateConfig,
  validatePartialConfig,
} from './trainer/config.js';
export {
  type MetricsLogOptions,
  type MetricsRecord,
  METRICS_FILE,
  MetricsLog,
  metricSeries,
  openMetricsLog,
  readMetrics,
} from './trainer/metrics-log.js';
export {
  type PlotOptions,
  type PlotSeries,
  niceTicks,
  plotMetrics,
  renderSvgPlot,
  writeSvgPlot,
} from './trainer/plot.js';
export {
  type Progress,
  type ProgressFields,
  type ProgressOptions,
  type ProgressStream,
  BarProgress,
  LineProgress,
  createProgress,
  formatFields,
  formatValue,
} from './trainer/progress.js';
export {
  type ResultRow,
  SAME_ANSWER,
  type ScoredExample,
  addTwinAgreement,
  type TableGroups,
  aggregateRows,
  formatResultsMatrix,
  formatResultsTable,
  policyRows,
  writeResults,
} from './evaluation/results.js';
export {
  type TablePolicy,
  loadPolicyFrom,
  methodName,
  plotRunCurves,
  resultsAndKinds,
  resultsTable,
  tableExamples,
} from './evaluation/report.js';
export { type KindRow, formatKindTable, kindRows } from './evaluation/kinds.js';
export { lengthBucketedBatches, warmStart, warmStartDir } from './trainer/warm-start.js';
export {
  type WarmStartData,
  type WarmStartOptimizers,
  warmStartData,
  warmStartOptimizers,
  warmStartStep,
} from './trainer/warm-start-steps.js';
export { type RlRun, rlRun } from './trainer/rl-run.js';
export { presetConfig } from './trainer/preset-config.js';
export { drawWindows, pretrain, pretrainDir, tokenStream } from './trainer/pretrain.js';
export { HF_EXPORT_DIR, type TrainResult, trainAgent } from './trainer/trainer.js';
export {
  checkpointTaskContext,
  checkpointVocabulary,
  exportPretrainedPolicy,
  pretrainedVocabulary,
} from './checkpoints/pretrained.js';
export {
  type Evaluation,
  type EvaluationSampling,
  GREEDY_EVALUATION,
  evaluate,
} from './evaluation/evaluate.js';
export { type EpisodeRecord, episodeRecords, writeEpisodes } from './evaluation/episodes.js';
export {
  type ActionPart,
  type ForcedToken,
  type ImitationGroup,
  type ImitationReport,
  imitationReport,
  imitationTable,
  scoreTokens,
} from './evaluation/imitation.js';
export { type SftOptions, type SftStepResult, sftStep } from './trainer/sft.js';
export { demonstrate } from './trainer/demonstrations.js';
export { type RlContext, type StepMetrics, meanInfo, rlStep } from './trainer/rl-step.js';
export { buildCritic, buildPolicy, freezeCopy, policyConfig } from './trainer/models.js';
export { type RolloutEvent, type RolloutOptions, rollout } from './rollout/engine.js';
export type { RolloutLimits, RolloutSampling, TextCodec } from './rollout/config.js';
export {
  type FinishReason,
  type PlacedReward,
  type RewardKind,
  type ToolCallRecord,
  type Trajectory,
  type TurnSpan,
  actionTokenCount,
  startTrajectory,
  totalReward,
} from './mdp/trajectory.js';
export {
  type AgentTask,
  type EntityRenaming,
  type PretrainedVocabulary,
  type TaskContext,
  type TaskDefinition,
  type TaskFactory,
  type TaskVocabulary,
  type TrainingStage,
  createTask,
  defineTask,
  pretrainedChat,
  registerTask,
  resolveTaskOptions,
  taskDefinition,
  taskNames,
} from './tasks/index.js';
export { type KindMix, kindWeights, mixesKinds, parseKindBoost } from './tasks/kind-balance.js';
export {
  type NumberRule,
  type Static,
  type TObject,
  bool,
  defaultsOf,
  int,
  keyPaths,
  num,
  oneOf,
  optionalInt,
  section,
  str,
} from './options/schema.js';
export { type OptionsPlace, completeOptions, validateOptions } from './options/validate.js';
export { type AdapterProbe, prepareBackend, probeGpuAdapter } from './trainer/backend-setup.js';
export {
  AGENT_FILE,
  type AgentDescription,
  TOKENIZER_FILE,
  agentFiles,
  policyFolder,
  readAgentDescription,
} from './checkpoints/agent-files.js';
export {
  type AgentAnswer,
  type AskOptions,
  type LoadedAgent,
  describedAgent,
  loadAgent,
  transcript,
} from './checkpoints/load-agent.js';
export {
  type AgentFileContents,
  type AgentFromFilesOptions,
  type AgentTaskContext,
  agentFromFiles,
} from './checkpoints/agent-from-files.js';
export {
  checkDescribedTask,
  loadPolicyWeights,
  parseAgentDescription,
} from './checkpoints/agent-description.js';
export { describeEvaluation, validationKey, validationRecord } from './evaluation/evaluate.js';
export { type TableLayout, tableLayout } from './evaluation/results.js';
export * from './tasks/multihop-qa/index.js';
export {
  type CliOutput,
  type CommandContext,
  type CommandHandlers,
  type CommandName,
  type CommandOptions,
  type HandlerResult,
  type ServeSearchContext,
  HANDLERS_NOT_BUILT,
  loadHandlers,
} from './cli/handlers.js';
export { type CliIo, type HandlersSource, runCli } from './cli/run.js';
