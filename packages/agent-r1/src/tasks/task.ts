/**
 * What the trainer needs from a task: examples, an environment per trajectory, the tokenizer, the strings
 * and tokens that end an action, (for the supervised warm start) scripted demonstrations, and the hooks
 * the trainer calls without knowing the task: how a stage draws its examples, whether an episode is played
 * with its entities renamed, the results table's groups and the answer metrics. A task is registered with
 * its own options (tasks/registry.ts); the trainer holds no key or branch for one task.
 */
import type { HfTokenizer } from '@agent-r1/nn';
import type { Generator } from '@agent-r1/tensor';
import type { AgentEnv } from '../mdp/env.js';
import type { TextPolicy } from '../mdp/text-episode.js';
import type { Static, TObject } from '../options/schema.js';
import type { TextCodec } from '../rollout/config.js';
import type { TrainConfig } from '../trainer/config.js';

/** The training stages that draw examples from the task. */
export type TrainingStage = 'warm-start' | 'rl';

/** A model-free baseline's scores on one group of examples (a row of the results table). */
export interface ResultRow {
  method: string;
  /** The group (e.g. hop count), or 'all'. */
  group: number | string;
  n: number;
  /** Mean of each answer metric (`AgentTask.answerMetrics`). */
  scores: Record<string, number>;
}

export interface AgentTask<Example = unknown> {
  name: string;
  train: readonly Example[];
  validation: readonly Example[];
  /** The held-out test split of the results table, when the task has one. */
  test?: readonly Example[];
  /** Where `test` comes from, for the table's title: 'test split' by default, or e.g. a user's file. */
  testSource?: string;
  /**
   * The results table's group of an example (hop count for multi-hop QA), or its groups (a comparison
   * question is also in 'comparisons'); absent: one group.
   */
  groupOf?(example: Example): number | string | readonly (number | string)[];
  /**
   * The kind of an example (multi-hop QA: its question template, e.g. 'compare_area'), for the results'
   * breakdown by kind with each tool's calls; undefined leaves the example out of it. Absent: no breakdown.
   */
  kindOf?(example: Example): string | undefined;
  /**
   * Whether an example counts in the table's 'all' column (default true): false for a probe, e.g. a copy
   * of a question with its options swapped, which is reported in its own group only.
   */
  countsInAll?(example: Example): boolean;
  /**
   * For a probe copy of an example (a comparison asked with its options swapped), the example it copies:
   * the results table then scores how often the two get the same answer ('sameAnswer').
   */
  twinOf?(example: Example): Example | undefined;
  /** What the groups are called in the table ('hops'), and a group's column name ('2-hop'). */
  groupName?: string;
  groupLabel?(group: number | string): string;
  /** Rows of the task's model-free baselines on `examples` (e.g. naive RAG), for the results table. */
  baselines?(examples: readonly Example[]): Promise<ResultRow[]>;
  makeEnv(): AgentEnv<Example>;
  codec: TextCodec;
  vocabSize: number;
  /**
   * The tokenizer behind `codec`, when it is data (a trained BPE): saved with each checkpoint, so that a
   * policy is never paired with a tokenizer other than the one it was trained with.
   */
  tokenizer?: {
    toJSON(): unknown;
    /** The files it is saved as, when not tokenizer.json alone (a Hugging Face tokenizer's two). */
    files?(): Record<string, string>;
  };
  stopTokens: readonly number[];
  stopStrings: readonly string[];
  /**
   * Plain texts for language-model pretraining (`pretrain.steps`), e.g. the documents the task's tool
   * searches: what a pretrained model would have read before it is taught the task.
   */
  pretrainTexts?(): readonly string[];
  /** A scripted policy for one example, for demonstrations (the supervised warm start). */
  scripted?(example: Example, index: number): TextPolicy;
  /** The examples the RL stage draws its prompts from; absent: `train`. */
  rlPrompts?: readonly Example[];
  /**
   * Each example's weight in a stage's draws (mean 1: a pass keeps its size), e.g. to balance kinds of
   * example; undefined draws every example alike.
   */
  exampleWeights?(stage: TrainingStage, examples: readonly Example[]): number[] | undefined;
  /** The chance that a stage's episode is played with its entities renamed (`renameEntities`); absent: 0. */
  renameChance?(stage: TrainingStage): number;
  /**
   * A renaming of one episode's entities (found in its texts, all of them given: prompt, actions,
   * observations), consistent across texts, with new names drawn from `generator`: an augmentation that
   * teaches copying names from the context instead of recalling the training set's. `stage` is the stage
   * that plays the episode, for a task whose names differ by stage. `fit` 'no-longer' asks for new names
   * no longer in tokens than those they replace (and numbers as long), so that the texts keep their length:
   * the last draws for an episode whose free renamings outgrow the rollout's limits (`sft.renameToFit`,
   * `train.renameToFit`); a task that cannot draws as usual.
   */
  renameEntities?(
    example: Example,
    texts: readonly string[],
    generator: Generator,
    stage: TrainingStage,
    fit?: 'no-longer',
  ): EntityRenaming;
  /**
   * Info keys scored on the answer, the main one first (e.g. 'em', 'f1'): 0 for a trajectory that never
   * answered. They name the step metrics, the evaluations and the results table's columns.
   */
  answerMetrics?: readonly string[];
  /** The table's name of an answer metric ('EM'); default: a known name or the key. */
  metricLabels?: Readonly<Record<string, string>>;
  /** An example made from a user's question, for `agent-r1 chat`. */
  fromQuestion?(question: string): Example;
}

/** The tokens a task's agent reads and writes: what the trainer needs of its tokenizer. */
export type TaskVocabulary = Pick<
  AgentTask,
  'codec' | 'vocabSize' | 'tokenizer' | 'stopTokens' | 'stopStrings'
>;

/**
 * The pretrained model a run starts from (`model.from`), as a task is built for it: the task's codec,
 * prompts and stop tokens are the model's (its tokenizer and chat template, e.g. through `chatTools`),
 * and its `vocabSize` is `vocabSize` (the model's embedding rows, which may exceed the tokenizer's ids).
 */
export interface PretrainedVocabulary {
  /** Where the tokenizer came from, for messages. */
  source: string;
  tokenizer: HfTokenizer;
  vocabSize: number;
  /** Variables its chat template reads besides the conversation (`model.chatVariables`). */
  chatVariables?: Record<string, unknown>;
}

/** What a task is built with besides the config and its options. */
export interface TaskContext {
  /** Set when the run starts from a pretrained model; a task that cannot take one throws. */
  pretrained?: PretrainedVocabulary;
}

/** Names replaced by others in every text of an episode (`apply`), and put back (`restore`). */
export interface EntityRenaming {
  apply(text: string): string;
  restore(text: string): string;
}

/** Builds a task from the run's config and the task's resolved options. */
export type TaskFactory<Options = Record<string, unknown>> = (
  config: TrainConfig,
  options: Options,
  context: TaskContext,
) => AgentTask | Promise<AgentTask>;

/** A task as registered: its name, its own options (defined once, like the trainer's keys), its factory. */
export interface TaskDefinition<Options = Record<string, unknown>> {
  name: string;
  /** One line for `agent-r1 keys` and error messages. */
  description?: string;
  /** The task's options as a `section(...)` of @agent-r1/agent's option builders; absent: none. */
  options?: TObject;
  create: TaskFactory<Options>;
}

/** A task definition whose options type follows from its schema. */
export function defineTask<S extends TObject>(definition: {
  name: string;
  description?: string;
  options: S;
  create: TaskFactory<Static<S>>;
}): TaskDefinition<Static<S>> {
  return definition;
}
