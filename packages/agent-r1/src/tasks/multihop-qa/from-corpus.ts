/**
 * The multi-hop task from data in hand: a corpus, questions and a trained tokenizer (a checkpoint's), with
 * no dataset files and no tokenizer training, e.g. in a web page. Its episodes are `multihopQaTask`'s: the
 * same prompt, search tool (a BM25 index built here over `corpus`), environment options and answer scores.
 * It answers and evaluates; it carries no training hooks.
 */
import type { Tokenizer } from '@agent-r1/nn';
import type { AgentTask } from '../task.js';
import type { Doc, QaExample } from './data/types.js';
import { makeMultihopEnv, multihopAnswering, multihopEnvOptions, tagStyle, tagVocabulary } from './env.js';
import { SearchIndex } from './search/bm25.js';

export interface MultihopCorpusTaskOptions {
  config: {
    rollout: { maxTurns: number };
    algorithm?: { processRewards: boolean };
    taskOptions?: Record<string, unknown>;
  };
  tokenizer: Tokenizer;
  corpus: readonly Doc[];
  /** The questions with gold answers the task evaluates on (its validation and test split). */
  questions?: readonly QaExample[];
  /** An index already built over `corpus` (building one takes about a second for the built-in corpus). */
  index?: SearchIndex;
}

export function multihopTaskFromCorpus(o: MultihopCorpusTaskOptions): AgentTask<QaExample> {
  if (o.corpus.length === 0) throw new Error('multihopTaskFromCorpus: the corpus holds no documents');
  const index = o.index ?? SearchIndex.build(o.corpus);
  const docs = new Map(o.corpus.map((d) => [d.id, d]));
  // A policy trained with the compare tool gets it here too (its tokenizer has the tags).
  const tools = {
    compareTool: o.config.taskOptions?.compareTool === true,
    compareStatements: o.config.taskOptions?.compareStatements === true,
  };
  const makeEnv = makeMultihopEnv(index, multihopEnvOptions(o.config, tools), docs, tagStyle(tools));
  const questions = o.questions ?? [];
  return {
    ...multihopAnswering(makeEnv, tagVocabulary(o.tokenizer, tools)),
    train: [],
    validation: questions,
    test: questions,
  };
}
