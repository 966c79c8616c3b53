/**
 * @agent-r1/agent/browser — the part of the package that runs in a web page: nothing here imports a Node
 * module (apps/web's bundle test checks it). A trained agent from its checkpoint's files
 * (`agentFromFiles`), the rollout engine with its token events, environments, tools and their formats,
 * rewards, the config's definition and checks, the multi-hop task over a corpus in hand with its BM25
 * search, the reveal toy, and training's steps (the warm start's and RL's, as `trainAgent` takes them).
 * Reading folders, whole training runs with their checkpoints and logs, the task registry and the command
 * line stay in the main entry point.
 */
export { normalizeAnswer, exactMatch, f1Score } from './rewards/qa.js';
export type { AgentEnv, EnvFactory, StepResult } from './mdp/env.js';
export { type CallRecord, ToolEnv, type ToolEnvConfig, type ScoreResult } from './mdp/tool-env.js';
export { runTextEpisode, type TextEpisode, type TextPolicy } from './mdp/text-episode.js';
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
export { type RolloutEvent, type RolloutOptions, rollout } from './rollout/engine.js';
export type { RolloutLimits, RolloutSampling, TextCodec } from './rollout/config.js';
export {
  type Evaluation,
  type EvaluationSampling,
  describeEvaluation,
  evaluate,
} from './evaluation/evaluate.js';
export type {
  AgentTask,
  PretrainedVocabulary,
  ResultRow,
  TaskContext,
  TaskVocabulary,
  TrainingStage,
} from './tasks/task.js';
export { pretrainedChat } from './tasks/pretrained-chat.js';
export {
  type PartialTrainConfig,
  type TrainConfig,
  DEFAULT_CONFIG,
  TrainConfigSchema,
} from './trainer/config-definition.js';
export { validateConfig, validatePartialConfig } from './trainer/config-schema.js';
export { presets } from './trainer/config-presets.js';
export { presetConfig } from './trainer/preset-config.js';
export { buildCritic, buildPolicy, freezeCopy, policyConfig } from './trainer/models.js';
export {
  type WarmStartData,
  type WarmStartOptimizers,
  lengthBucketedBatches,
  warmStartData,
  warmStartOptimizers,
  warmStartStep,
} from './trainer/warm-start-steps.js';
export { type RlRun, rlRun } from './trainer/rl-run.js';
export { type RlContext, type StepMetrics, meanInfo, rlStep } from './trainer/rl-step.js';
export { type SftOptions, type SftStepResult, sftStep } from './trainer/sft.js';
export { type RevealExample, revealTask } from './tasks/reveal/index.js';
export { ConfigError } from './options/validate.js';
export {
  AGENT_FILE,
  type AgentDescription,
  TOKENIZER_FILE,
  checkDescribedTask,
  loadPolicyWeights,
  parseAgentDescription,
} from './checkpoints/agent-description.js';
export {
  type AgentAnswer,
  type AskOptions,
  type LoadedAgent,
  describedAgent,
  transcript,
} from './checkpoints/agent.js';
export {
  type AgentFileContents,
  type AgentFromFilesOptions,
  type AgentTaskContext,
  agentFromFiles,
} from './checkpoints/agent-from-files.js';
export {
  COMPARE_SPECIAL_TOKENS,
  DEFAULT_RETRIEVAL_REWARD,
  MULTIHOP_SNIPPET_CHARS,
  MULTIHOP_SPECIAL_TOKENS,
  MULTIHOP_CHAT_INSTRUCTION,
  type MultihopEnvOptions,
  type MultihopStyle,
  chatStyle,
  makeMultihopEnv,
  multihopAnswering,
  multihopEnvOptions,
  multihopFormat,
  multihopPrompt,
  multihopSpecialTokens,
  multihopTools,
  scoreAnswer,
  substringMatch,
  tagStyle,
  tagVocabulary,
} from './tasks/multihop-qa/env.js';
export { type MultihopCorpusTaskOptions, multihopTaskFromCorpus } from './tasks/multihop-qa/from-corpus.js';
export {
  COMPARE_TOOL,
  compareTool,
  parseCompareItems,
  parseCompareValues,
} from './tasks/multihop-qa/compare-tool.js';
export type { Doc, QaExample, QaKind } from './tasks/multihop-qa/data/types.js';
export {
  type SearchDocument,
  type SearchHit,
  SearchIndex,
  type SearchIndexOptions,
  type Searcher,
} from './tasks/multihop-qa/search/bm25.js';
export {
  SEARCH_TOOL,
  formatSearchHits,
  searchTool,
  type SearchToolOptions,
} from './tasks/multihop-qa/search/tool.js';
