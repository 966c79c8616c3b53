/**
 * What the trainer needs from a task: examples, an environment per trajectory, the tokenizer, the strings
 * and tokens that end an action, and (for the supervised warm start) scripted demonstrations. A new task
 * implements this and registers a factory by name; the trainer does not change.
 */
import type { Generator } from '@agent-r1/tensor';
import type { AgentEnv } from '../mdp/env.js';
import type { TextPolicy } from '../mdp/text-episode.js';
import type { TextCodec } from '../rollout/config.js';
import type { TrainConfig } from '../trainer/config.js';
import type { ResultRow } from '../trainer/results.js';

export interface AgentTask<Example = unknown> {
  name: string;
  train: readonly Example[];
  validation: readonly Example[];
  /** The held-out test split of the results table, when the task has one. */
  test?: readonly Example[];
  /** The results table's group of an example (hop count for multi-hop QA); absent: one group. */
  groupOf?(example: Example): number | string;
  /** An example's kind (multi-hop QA: its question template), for `sft.balanceKinds`/`train.balanceKinds`. */
  kindOf?(example: Example): string;
  /** Rows of the task's model-free baselines on `examples` (e.g. naive RAG), for the results table. */
  baselines?(examples: readonly Example[]): Promise<ResultRow[]>;
  makeEnv(): AgentEnv<Example>;
  codec: TextCodec;
  vocabSize: number;
  stopTokens: readonly number[];
  stopStrings: readonly string[];
  /**
   * Plain texts for language-model pretraining (`pretrain.steps`), e.g. the documents the task's tool
   * searches: what a pretrained model would have read before it is taught the task.
   */
  pretrainTexts?(): readonly string[];
  /** A scripted policy for one example, for demonstrations (the supervised warm start). */
  scripted?(example: Example, index: number): TextPolicy;
  /**
   * For `sft.renameEntities` and `train.renameEntities`: a renaming of one episode's entities (found in its
   * texts, all of them given: prompt, actions, observations), consistent across texts, with new names drawn
   * from `generator`.
   */
  renameEntities?(example: Example, texts: readonly string[], generator: Generator): EntityRenaming;
  /** Info keys scored on the answer (e.g. 'em', 'f1'): 0 for a trajectory that never answered. */
  answerMetrics?: readonly string[];
  /** An example made from a user's question, for `agent-r1 chat`. */
  fromQuestion?(question: string): Example;
}

/** Names replaced by others in every text of an episode (`apply`), and put back (`restore`). */
export interface EntityRenaming {
  apply(text: string): string;
  restore(text: string): string;
}

export type TaskFactory = (config: TrainConfig) => AgentTask | Promise<AgentTask>;

const factories = new Map<string, TaskFactory>();

export function registerTask(name: string, factory: TaskFactory): void {
  factories.set(name, factory);
}

export async function createTask(config: TrainConfig): Promise<AgentTask> {
  const factory = factories.get(config.task);
  if (!factory)
    throw new Error(`unknown task "${config.task}" (available: ${[...factories.keys()].join(', ')})`);
  return factory(config);
}
