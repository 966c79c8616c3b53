/**
 * The multi-hop QA task for the trainer ('multihop-qa'): the built-in WordNet + world-countries dataset,
 * a BM25 index over its corpus, a ToolEnv with `<search>query</search>` (top-3 documents, each cut short,
 * back in `<result>…</result>`) and `<answer>…</answer>`, exact-match reward (SQuAD normalisation) plus a
 * small format reward, and a byte-level BPE tokenizer trained on the corpus and scripted demonstrations.
 *
 * The dataset (JSONL) and the tokenizer (JSON) are cached under `cacheDir` (default `.cache/multihop-qa`,
 * gitignored); the index is rebuilt once per process (under a second, faster than loading a saved one).
 * Nothing is downloaded: the sources are installed npm packages.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer, trainBpe } from '@agent-r1/nn';
import type { EnvFactory } from '../../mdp/env.js';
import { runTextEpisode } from '../../mdp/text-episode.js';
import { ToolEnv } from '../../mdp/tool-env.js';
import { exactMatch, f1Score, normalizeAnswer } from '../../rewards/qa.js';
import { TagsFormat } from '../../tools/formats/tags.js';
import { ToolRegistry } from '../../tools/registry.js';
import { completeOptions } from '../../options/validate.js';
import { type KindMix, kindWeights, mixesKinds } from '../kind-balance.js';
import type { AgentTask, TrainingStage } from '../task.js';
import { type MultihopOptions, MultihopOptionsSchema } from './options.js';
import { noRetrievalBaseline, naiveRagBaseline, scriptedSearcherBaseline } from './baselines.js';
import { buildMultihopDataset, DATASET_VERSION } from './data/build.js';
import { loadCorpusJsonl, loadQuestionsJsonl } from './data/jsonl.js';
import type { Doc, MultihopDataset, QaExample } from './data/types.js';
import { entityRenamer, renamePool } from './rename.js';
import { retrievalReward } from './retrieval-reward.js';
import { scriptedSearcher } from './scripted.js';
import { SEARCH_TOOL, SearchIndex, searchTool } from './search/index.js';

export const MULTIHOP_SPECIAL_TOKENS = [
  '<search>',
  '</search>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
  '<eos>',
] as const;

/** Bump when the tokenizer's training texts or pre-tokeniser change, so a stale cached one is not reused. */
export const MULTIHOP_TOKENIZER_VERSION = 4;

export const DEFAULT_MULTIHOP_CACHE_DIR = join('.cache', 'multihop-qa');

/** Characters of each document a search shows by default (3 of them fit ~96 tokens). */
export const MULTIHOP_SNIPPET_CHARS = 80;

/**
 * The retrieval reward with `algorithm.processRewards` on: 0.3 in all for finding every supporting
 * document (0.15 each for a 2-hop question), so that an exact answer (1) stays worth several times any
 * amount of searching.
 */
export const DEFAULT_RETRIEVAL_REWARD = 0.3;

export interface MultihopResources {
  dataset: MultihopDataset;
  index: SearchIndex;
  docs: ReadonlyMap<string, Doc>;
}

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

export interface MultihopTaskOptions extends MultihopEnvOptions {
  /** Where the dataset and tokenizer are cached; default `.cache/multihop-qa` (under the working dir). */
  cacheDir?: string;
  /** Seed of the dataset's splits; default 0 (independent of the training seed). */
  dataSeed?: number;
  /** Tokenizer vocabulary; default 3000. */
  vocabSize?: number;
  /** Use only the first n training / validation questions (tests). */
  trainLimit?: number;
  validationLimit?: number;
}

const resources = new Map<string, MultihopResources>();

/** The option key of each training stage's setting. */
const STAGE_KEY = { 'warm-start': 'warmStart', rl: 'rl' } as const;

/** The training questions of the hop counts in `spec` ('2,3'); '' all of them. */
function questionsWithHops(train: readonly QaExample[], spec: string): readonly QaExample[] {
  const wanted = new Set(
    spec
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== ''),
  );
  if (wanted.size === 0) return train;
  const pool = train.filter((q) => wanted.has(String(q.hops)));
  if (pool.length === 0) {
    const known = [...new Set(train.map((q) => String(q.hops)))].sort();
    throw new Error(
      `taskOptions.rlHops: no training question has ${[...wanted].join(' or ')} hops; they have ${known.join(', ')}`,
    );
  }
  return pool;
}

/** The dataset and its search index, built (or loaded from the dataset cache) once per process. */
export function loadMultihopResources(
  options: { cacheDir?: string; dataSeed?: number } = {},
): MultihopResources {
  const cacheDir = options.cacheDir ?? DEFAULT_MULTIHOP_CACHE_DIR;
  const seed = options.dataSeed ?? 0;
  const key = `${cacheDir}\u0000${seed}`;
  let r = resources.get(key);
  if (r === undefined) {
    const dataset = buildMultihopDataset({ seed, cacheDir });
    r = {
      dataset,
      index: SearchIndex.build(dataset.corpus),
      docs: new Map(dataset.corpus.map((d) => [d.id, d])),
    };
    resources.set(key, r);
  }
  return r;
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

/** Scripted episodes' texts (prompt, actions, observations), for training the tokenizer. */
async function demonstrationTexts(
  r: MultihopResources,
  makeEnv: EnvFactory<QaExample>,
  examples: readonly QaExample[],
): Promise<string[]> {
  const out: string[] = [];
  for (const ex of examples) {
    const ep = await runTextEpisode(makeEnv(), ex, scriptedSearcher(ex, r.docs, multihopPrompt(ex)));
    out.push(ep.context);
  }
  return out;
}

/**
 * The tokenizer: byte-level BPE trained on the corpus and 500 scripted episodes of the training split,
 * with the tags and `<eos>` as special tokens; deterministic, and cached as JSON under `cacheDir`.
 */
export async function multihopTokenizer(
  r: MultihopResources,
  options: { cacheDir?: string; vocabSize?: number; dataSeed?: number } & MultihopEnvOptions = {},
): Promise<Tokenizer> {
  const vocabSize = options.vocabSize ?? 3000;
  const cacheDir = options.cacheDir ?? DEFAULT_MULTIHOP_CACHE_DIR;
  const file = join(
    cacheDir,
    `tokenizer-v${MULTIHOP_TOKENIZER_VERSION}-data${DATASET_VERSION}-seed${options.dataSeed ?? 0}-vocab${vocabSize}.json`,
  );
  if (existsSync(file)) return Tokenizer.load(file);
  const texts = [
    ...r.dataset.corpus.map((d) => `${d.title}: ${d.contents}`),
    ...(await demonstrationTexts(
      r,
      makeMultihopEnv(r.index, options, r.docs),
      r.dataset.questions.train.slice(0, 500),
    )),
  ];
  // Single digits and punctuation marks: a name or number written in an action is then the same tokens as
  // in the document it was read from (`Washington D.C.` out of `…is Washington D.C..`), so it can be copied.
  const tokenizer = trainBpe(texts, {
    vocabSize,
    specialTokens: [...MULTIHOP_SPECIAL_TOKENS],
    pretokenizer: 'split-digits-punct',
  });
  await mkdir(cacheDir, { recursive: true });
  await tokenizer.save(file);
  return tokenizer;
}

function userCorpusIndex(path: string): SearchIndex {
  const docs = loadCorpusJsonl(path);
  if (docs.length === 0) throw new Error(`corpus ${path}: the file holds no documents`);
  return SearchIndex.build(docs);
}

/**
 * The task as the trainer builds it: `config.taskOptions` are its options (MultihopOptionsSchema; the
 * defaults fill what is not given), `options` what a program may set besides (cache, limits, env).
 */
export async function multihopQaTask(
  config: {
    rollout: { maxTurns: number };
    algorithm?: { processRewards: boolean };
    taskOptions?: Record<string, unknown>;
  },
  options: MultihopTaskOptions = {},
): Promise<AgentTask<QaExample>> {
  const own = completeOptions<MultihopOptions>(MultihopOptionsSchema, config.taskOptions ?? {}, {
    prefix: 'taskOptions',
    owner: 'task "multihop-qa"',
  });
  const r = loadMultihopResources(options);
  const corpusFile = own.corpus;
  const questionsFile = own.questions;
  // Supporting documents are known only in the built-in corpus: a user corpus gets no retrieval reward.
  const ownCorpus = corpusFile === '';
  const envOptions: MultihopEnvOptions = {
    ...options,
    maxTurns: config.rollout.maxTurns,
    retrievalReward: ownCorpus
      ? (options.retrievalReward ?? (config.algorithm?.processRewards ? DEFAULT_RETRIEVAL_REWARD : 0))
      : 0,
  };
  // The user's questions first: a bad line stops the run before an index or a tokenizer is built.
  const test = questionsFile === '' ? r.dataset.questions.test : loadQuestionsJsonl(questionsFile);
  if (test.length === 0) throw new Error(`questions ${questionsFile}: the file holds no questions`);
  const index = ownCorpus ? r.index : userCorpusIndex(corpusFile);
  const makeEnv = makeMultihopEnv(index, envOptions, r.docs);
  const tokenizer = await multihopTokenizer(r, options);
  const { train, validation } = r.dataset.questions;
  const namePool = renamePool(train);
  const trainSplit = options.trainLimit === undefined ? train : train.slice(0, options.trainLimit);
  const kindOf = (ex: QaExample) => ex.kind;
  const mixOf = (stage: TrainingStage): KindMix => ({
    balanceKinds: own.balanceKinds[STAGE_KEY[stage]],
    kindBoost: own.kindBoost[STAGE_KEY[stage]],
    keys: {
      balanceKinds: `taskOptions.balanceKinds.${STAGE_KEY[stage]}`,
      kindBoost: `taskOptions.kindBoost.${STAGE_KEY[stage]}`,
    },
  });
  const rlPrompts = questionsWithHops(trainSplit, own.rlHops);
  // A bad boost (a kind no example has) stops here, before anything is trained.
  for (const stage of ['warm-start', 'rl'] as const)
    kindWeights(kindOf, stage === 'rl' ? rlPrompts : trainSplit, mixOf(stage));
  return {
    name: 'multihop-qa',
    answerMetrics: ['em', 'f1', 'subEm'],
    train: trainSplit,
    rlPrompts,
    exampleWeights: (stage, examples) =>
      mixesKinds(mixOf(stage)) ? kindWeights(kindOf, examples, mixOf(stage)) : undefined,
    renameChance: (stage) => own.renameEntities[STAGE_KEY[stage]],
    validation:
      options.validationLimit === undefined ? validation : validation.slice(0, options.validationLimit),
    test,
    testSource: questionsFile === '' ? 'test split' : questionsFile,
    // A user's questions without hop counts are one group, not a '0-hop' column.
    ...(test.every((q) => q.hops > 0)
      ? {
          groupOf: (ex: QaExample) => ex.hops,
          groupName: 'hops',
          groupLabel: (g: number | string) => `${g}-hop`,
        }
      : {}),
    baselines: async (examples) => [
      ...noRetrievalBaseline(examples, train),
      ...(await naiveRagBaseline(examples, index, {
        k: envOptions.topK ?? 3,
        maxCharsPerDoc: envOptions.maxCharsPerDoc ?? MULTIHOP_SNIPPET_CHARS,
      })),
      // The gold-chain searcher needs each question's supporting documents in the corpus searched.
      ...(corpusFile === '' && examples.every((q) => q.supportingDocs.length > 0)
        ? await scriptedSearcherBaseline(examples, makeEnv, r.docs)
        : []),
    ],
    makeEnv,
    codec: { encode: (t) => tokenizer.encode(t), decode: (ids) => tokenizer.decode(ids) },
    vocabSize: tokenizer.vocabSize,
    tokenizer,
    stopTokens: [tokenizer.tokenId('<eos>')],
    stopStrings: multihopFormat().stop,
    // The search corpus, as the tokenizer read it: what a pretrained model would have read (Wikipedia, for
    // the paper's models), test places included, as it is in the documents the tool returns.
    pretrainTexts: () => r.dataset.corpus.map((d) => `${d.title}: ${d.contents}`),
    scripted: (ex) => scriptedSearcher(ex, r.docs, multihopPrompt(ex)),
    renameEntities: (ex, texts, generator) => entityRenamer(ex, texts, namePool, generator),
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
