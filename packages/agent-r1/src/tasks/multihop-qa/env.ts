/**
 * The multi-hop QA episode, apart from the dataset's files: the prompt, the `<search>`/`<answer>` tags, the
 * answer's scores, the environment over a search index, and the task as an agent needs it to answer
 * (`multihopAnswering`: tokenizer, stop tokens, environment, typed questions). Nothing here reads files, so
 * a web page builds the same episodes as `multihopQaTask` (./task.ts) from a corpus and a tokenizer it
 * fetched.
 */
import type { Tokenizer } from '@agent-r1/nn';
import type { EnvFactory } from '../../mdp/env.js';
import { ToolEnv } from '../../mdp/tool-env.js';
import { exactMatch, f1Score, normalizeAnswer } from '../../rewards/qa.js';
import { TagsFormat } from '../../tools/formats/tags.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { AgentTask } from '../task.js';
import type { Doc, QaExample } from './data/types.js';
import { retrievalReward } from './retrieval-reward.js';
import type { SearchIndex } from './search/bm25.js';
import { SEARCH_TOOL, searchTool } from './search/tool.js';

export const MULTIHOP_SPECIAL_TOKENS = [
  '<search>',
  '</search>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
  '<eos>',
] as const;

/** Characters of each document a search shows by default (3 of them fit ~96 tokens). */
export const MULTIHOP_SNIPPET_CHARS = 80;

/**
 * The retrieval reward with `algorithm.processRewards` on: 0.3 in all for finding every supporting
 * document (0.15 each for a 2-hop question), so that an exact answer (1) stays worth several times any
 * amount of searching.
 */
export const DEFAULT_RETRIEVAL_REWARD = 0.3;

export interface MultihopEnvOptions {
  /** Most actions per episode; default 4 (3 searches and an answer). */
  maxTurns?: number;
  /** Documents per search; default 3. */
  topK?: number;
  /** Each document's text is cut to this many characters; default MULTIHOP_SNIPPET_CHARS (80). */
  maxCharsPerDoc?: number;
  /** Bonus for a well-formed answer; default 0.1. */
  formatReward?: number;
  /**
   * Process reward for retrieving the question's supporting documents, split evenly over them and paid
   * for each one the first time a search shows it (`retrievalReward`); default 0 (none). Needs the corpus
   * documents (`makeMultihopEnv`'s `docs`).
   */
  retrievalReward?: number;
}

/** The compact prompt: the question and one line of instruction (tiny models: short). */
export function multihopPrompt(example: Pick<QaExample, 'question'>): string {
  return `Question: ${example.question}\nSearch with <search>query</search>, then reply <answer>answer</answer>.\n`;
}

export function multihopFormat(): TagsFormat {
  return new TagsFormat({ tags: [{ tag: 'search', tool: SEARCH_TOOL, argument: 'query' }] });
}

/** 1 when a gold answer occurs in the normalised prediction (SQuAD normalisation, whole words). */
export function substringMatch(prediction: string, golds: readonly string[]): number {
  const p = ` ${normalizeAnswer(prediction)} `;
  return golds.some((g) => {
    const n = normalizeAnswer(g);
    return n !== '' && p.includes(` ${n} `);
  })
    ? 1
    : 0;
}

/** EM, F1 and substring EM of an answer. */
export function scoreAnswer(
  answer: string,
  golds: readonly string[],
): { em: number; f1: number; subEm: number } {
  return { em: exactMatch(answer, golds), f1: f1Score(answer, golds), subEm: substringMatch(answer, golds) };
}

/**
 * The environment factory: a ToolEnv with the `search` tool over `index`; `docs` (the corpus by id) lets it
 * pay `options.retrievalReward`.
 */
export function makeMultihopEnv(
  index: SearchIndex,
  options: MultihopEnvOptions = {},
  docs?: ReadonlyMap<string, Doc>,
): EnvFactory<QaExample> {
  const retrieval = options.retrievalReward ?? 0;
  if (retrieval !== 0 && docs === undefined)
    throw new Error('makeMultihopEnv: retrievalReward needs the corpus documents (docs)');
  const tools = new ToolRegistry().register(
    searchTool(index, {
      defaultK: options.topK ?? 3,
      maxK: options.topK ?? 3,
      maxCharsPerDoc: options.maxCharsPerDoc ?? MULTIHOP_SNIPPET_CHARS,
    }),
  );
  const format = multihopFormat();
  return () =>
    new ToolEnv<QaExample>({
      tools,
      format,
      maxTurns: options.maxTurns ?? 4,
      formatReward: options.formatReward ?? 0.1,
      buildPrompt: (ex) => multihopPrompt(ex),
      score: (ex, answer) => {
        const s = scoreAnswer(answer, ex.answers);
        return { reward: s.em, info: { ...s, hops: ex.hops, kind: ex.kind, gold: ex.answers[0] ?? '' } };
      },
      ...(retrieval !== 0 && docs
        ? {
            processRewards: true,
            callReward: (ex, call, earlier) => retrievalReward(ex, call, earlier, docs, retrieval),
          }
        : {}),
    });
}

/**
 * The environment options of a run: its turns, and the retrieval reward where `algorithm.processRewards`
 * is on. Supporting documents are known only in the built-in corpus, so a user's corpus gets none.
 */
export function multihopEnvOptions(
  config: { rollout: { maxTurns: number }; algorithm?: { processRewards: boolean } },
  options: MultihopEnvOptions = {},
  builtInCorpus = true,
): MultihopEnvOptions {
  return {
    ...options,
    maxTurns: config.rollout.maxTurns,
    retrievalReward: builtInCorpus
      ? (options.retrievalReward ?? (config.algorithm?.processRewards ? DEFAULT_RETRIEVAL_REWARD : 0))
      : 0,
  };
}

/**
 * What the agent needs of the task to answer questions, shared by `multihopQaTask` and a page that has
 * only a checkpoint's tokenizer and a corpus: the tokenizer as codec, what ends an action, the answer
 * metrics, the environment and typed questions.
 */
export function multihopAnswering(
  makeEnv: EnvFactory<QaExample>,
  tokenizer: Tokenizer,
): Pick<
  AgentTask<QaExample>,
  | 'name'
  | 'answerMetrics'
  | 'makeEnv'
  | 'codec'
  | 'vocabSize'
  | 'tokenizer'
  | 'stopTokens'
  | 'stopStrings'
  | 'fromQuestion'
> {
  return {
    name: 'multihop-qa',
    answerMetrics: ['em', 'f1', 'subEm'],
    makeEnv,
    codec: { encode: (t) => tokenizer.encode(t), decode: (ids) => tokenizer.decode(ids) },
    vocabSize: tokenizer.vocabSize,
    tokenizer,
    stopTokens: [tokenizer.tokenId('<eos>')],
    stopStrings: multihopFormat().stop,
    fromQuestion: (question) => ({
      id: 'user',
      question,
      answers: [],
      hops: 0,
      kind: 'user',
      supportingDocs: [],
    }),
  };
}
