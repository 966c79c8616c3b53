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
import { completeOptions } from '../../options/validate.js';
import { type KindMix, kindWeights, mixesKinds } from '../kind-balance.js';
import { pretrainedChat } from '../pretrained-chat.js';
import type { AgentTask, TaskContext, TrainingStage } from '../task.js';
import { type MultihopOptions, MultihopOptionsSchema } from './options.js';
import { noRetrievalBaseline, naiveRagBaseline, scriptedSearcherBaseline } from './baselines.js';
import { buildMultihopDataset, DATASET_VERSION } from './data/build.js';
import { loadCorpusJsonl, loadQuestionsJsonl } from './data/jsonl.js';
import type { Doc, MultihopDataset, QaExample } from './data/types.js';
import {
  MULTIHOP_SNIPPET_CHARS,
  type MultihopEnvOptions,
  type MultihopStyle,
  chatStyle,
  makeMultihopEnv,
  multihopAnswering,
  multihopEnvOptions,
  multihopSpecialTokens,
  multihopTools,
  tagStyle,
  tagVocabulary,
} from './env.js';
import { corpusNamePieces, entityRenamer, renamePool, typeAdjectives } from './rename.js';
import { scriptedSearcher } from './scripted.js';
import { isSwappedComparison, multihopGroups, swappedTwins, withSwappedComparisons } from './swapped.js';
import { DEFAULT_SEARCH_INDEX_OPTIONS, SearchIndex } from './search/index.js';

/** Bump when the tokenizer's training texts or pre-tokeniser change, so a stale cached one is not reused. */
export const MULTIHOP_TOKENIZER_VERSION = 5;

export const DEFAULT_MULTIHOP_CACHE_DIR = join('.cache', 'multihop-qa');

export interface MultihopResources {
  dataset: MultihopDataset;
  index: SearchIndex;
  docs: ReadonlyMap<string, Doc>;
  /** The seed of the dataset's splits: the tokenizer trained on them says so in its cache name. */
  dataSeed: number;
  /** Whether the corpus names bridge types (taskOptions.bridgeTypes): the tokenizer's cache name says so. */
  bridgeTypes: boolean;
  /** The index's weight of a title match (taskOptions.searchTitleBoost): the tokenizer's cache name says so. */
  titleBoost: number;
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
  options: { cacheDir?: string; dataSeed?: number; bridgeTypes?: boolean; titleBoost?: number } = {},
): MultihopResources {
  const cacheDir = options.cacheDir ?? DEFAULT_MULTIHOP_CACHE_DIR;
  const seed = options.dataSeed ?? 0;
  const bridgeTypes = options.bridgeTypes ?? false;
  const titleBoost = options.titleBoost ?? DEFAULT_SEARCH_INDEX_OPTIONS.titleBoost;
  const key = `${cacheDir}\u0000${seed}\u0000${bridgeTypes}\u0000${titleBoost}`;
  let r = resources.get(key);
  if (r === undefined) {
    const dataset = buildMultihopDataset({ seed, cacheDir, bridgeTypes });
    r = {
      dataset,
      index: SearchIndex.build(dataset.corpus, { titleBoost }),
      docs: new Map(dataset.corpus.map((d) => [d.id, d])),
      dataSeed: seed,
      bridgeTypes,
      titleBoost,
    };
    resources.set(key, r);
  }
  return r;
}

/** Scripted episodes' texts (prompt, actions, observations), for training the tokenizer. */
async function demonstrationTexts(
  r: MultihopResources,
  makeEnv: EnvFactory<QaExample>,
  examples: readonly QaExample[],
  style: MultihopStyle,
): Promise<string[]> {
  const out: string[] = [];
  for (const ex of examples) {
    const ep = await runTextEpisode(makeEnv(), ex, scriptedSearcher(ex, r.docs, style));
    out.push(ep.context);
  }
  return out;
}

/**
 * The tokenizer: byte-level BPE trained on the corpus and 500 scripted episodes of the training split,
 * with the tags and `<eos>` as special tokens (and the compare tags, with episodes that call it, where
 * `options.compareTool`; its statements' verdict too where `options.compareStatements`; the think tags, with
 * episodes that plan, where `options.plan`); digits in runs of up to three where `options.digitGroups`, one
 * per token otherwise; deterministic, and cached as JSON under `cacheDir`.
 */
export async function multihopTokenizer(
  r: MultihopResources,
  options: { cacheDir?: string; vocabSize?: number; digitGroups?: boolean } & MultihopEnvOptions = {},
): Promise<Tokenizer> {
  const vocabSize = options.vocabSize ?? 3000;
  const cacheDir = options.cacheDir ?? DEFAULT_MULTIHOP_CACHE_DIR;
  // Each option that changes the tokenizer's training texts, special tokens or pieces names its own cache file.
  const suffixes = [
    options.compareTool && 'compare',
    options.compareTool && options.compareStatements && 'statements',
    options.plan && 'plan',
    r.bridgeTypes && 'types',
    r.titleBoost !== DEFAULT_SEARCH_INDEX_OPTIONS.titleBoost && `title${r.titleBoost}`,
    options.digitGroups && 'digits3',
  ].filter((s): s is string => typeof s === 'string');
  const file = join(
    cacheDir,
    [
      `tokenizer-v${MULTIHOP_TOKENIZER_VERSION}-data${DATASET_VERSION}-seed${r.dataSeed}-vocab${vocabSize}`,
      ...suffixes,
    ].join('-') + '.json',
  );
  const specialTokens = multihopSpecialTokens(options);
  if (existsSync(file)) {
    const cached = await Tokenizer.load(file);
    // One written before a special token was added is stale: trained again below, and replaced.
    if (specialTokens.every((t) => cached.specialTokens.includes(t))) return cached;
  }
  const style = tagStyle(options);
  const texts = [
    ...r.dataset.corpus.map((d) => `${d.title}: ${d.contents}`),
    ...(await demonstrationTexts(
      r,
      makeMultihopEnv(r.index, options, r.docs, style),
      r.dataset.questions.train.slice(0, 500),
      style,
    )),
  ];
  // Single punctuation marks, and single digits or runs of up to three: a name or number written in an
  // action is then the same tokens as in the document it was read from (`Washington D.C.` out of `…is
  // Washington D.C..`), so it can be copied.
  const tokenizer = trainBpe(texts, {
    vocabSize,
    specialTokens,
    pretokenizer: options.digitGroups ? 'split-punct-digits3' : 'split-digits-punct',
  });
  await mkdir(cacheDir, { recursive: true });
  await tokenizer.save(file);
  return tokenizer;
}

function userCorpusIndex(path: string, titleBoost: number): SearchIndex {
  const docs = loadCorpusJsonl(path);
  if (docs.length === 0) throw new Error(`corpus ${path}: the file holds no documents`);
  return SearchIndex.build(docs, { titleBoost });
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
  context: TaskContext = {},
): Promise<AgentTask<QaExample>> {
  const own = completeOptions<MultihopOptions>(MultihopOptionsSchema, config.taskOptions ?? {}, {
    prefix: 'taskOptions',
    owner: 'task "multihop-qa"',
  });
  const r = loadMultihopResources({
    ...options,
    bridgeTypes: own.bridgeTypes,
    titleBoost: own.searchTitleBoost,
  });
  const corpusFile = own.corpus;
  const questionsFile = own.questions;
  const ownCorpus = corpusFile === '';
  if (own.compareStatements && !own.compareTool)
    throw new Error('taskOptions.compareStatements needs taskOptions.compareTool (the tool it calls)');
  if (own.plan && context.pretrained)
    throw new Error(
      'taskOptions.plan is for a policy trained from scratch: a pretrained model keeps its chat template',
    );
  // How the episodes are written: the tools, and whether the policy plans.
  const styleOptions = {
    ...options,
    compareTool: own.compareTool,
    compareStatements: own.compareStatements,
    plan: own.plan,
  };
  const envOptions = multihopEnvOptions(
    config,
    { ...styleOptions, comparisonsNeedVerdict: own.comparisonsNeedVerdict },
    ownCorpus,
  );
  // The user's questions first: a bad line stops the run before an index or a tokenizer is built.
  const test = withSwappedComparisons(
    questionsFile === '' ? r.dataset.questions.test : loadQuestionsJsonl(questionsFile),
  );
  if (test.length === 0) throw new Error(`questions ${questionsFile}: the file holds no questions`);
  const index = ownCorpus ? r.index : userCorpusIndex(corpusFile, own.searchTitleBoost);
  // A pretrained model keeps its own tokenizer and speaks its chat template; a policy from scratch gets a
  // BPE trained on the corpus and the compact tags.
  const chat = context.pretrained ? pretrainedChat(context.pretrained) : null;
  const style = chat
    ? chatStyle(chat.chat, multihopTools(index, envOptions).list(), envOptions)
    : tagStyle(envOptions);
  const makeEnv = makeMultihopEnv(index, envOptions, r.docs, style);
  const vocabulary = chat
    ? chat.vocabulary
    : tagVocabulary(
        await multihopTokenizer(r, { ...styleOptions, digitGroups: own.digitGroups }),
        envOptions,
      );
  const { train, validation } = r.dataset.questions;
  const namePool = renamePool(train);
  const pieces =
    own.vocabularyNames > 0
      ? {
          ...corpusNamePieces(vocabulary.codec, vocabulary.vocabSize, r.dataset.corpus),
          share: own.vocabularyNames,
        }
      : undefined;
  const adjectives = typeAdjectives(r.dataset.corpus);
  // A name inside a text follows a space: its tokens are counted as the tokenizer reads it there.
  const tokensOf = (name: string) => vocabulary.codec.encode(` ${name}`).length;
  const noLonger = (name: string, other: string) => tokensOf(other) <= tokensOf(name);
  const limited = options.trainLimit === undefined ? train : train.slice(0, options.trainLimit);
  const trainSplit = own.swappedComparisons ? withSwappedComparisons(limited) : limited;
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
  // The training split's kinds: a boost may name one that a limited subset lacks, not one it has not.
  const kinds = new Set(train.map(kindOf));
  // A bad boost (a kind the training split has not) stops here, before anything is trained.
  for (const stage of ['warm-start', 'rl'] as const)
    kindWeights(kindOf, stage === 'rl' ? rlPrompts : trainSplit, mixOf(stage), kinds);
  return {
    ...multihopAnswering(makeEnv, vocabulary),
    train: trainSplit,
    rlPrompts,
    exampleWeights: (stage, examples) =>
      mixesKinds(mixOf(stage)) ? kindWeights(kindOf, examples, mixOf(stage), kinds) : undefined,
    renameChance: (stage) => own.renameEntities[STAGE_KEY[stage]],
    validation:
      options.validationLimit === undefined ? validation : validation.slice(0, options.validationLimit),
    test,
    testSource: questionsFile === '' ? 'test split' : questionsFile,
    countsInAll: (ex) => !isSwappedComparison(ex),
    twinOf: swappedTwins(test),
    kindOf,
    // A user's questions without hop counts are one group, not a '0-hop' column.
    ...(test.every((q) => q.hops > 0)
      ? {
          groupOf: multihopGroups,
          groupName: 'hops',
          groupLabel: (g: number | string) => (typeof g === 'number' ? `${g}-hop` : String(g)),
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
        ? await scriptedSearcherBaseline(examples, makeEnv, r.docs, style)
        : []),
    ],
    // The search corpus, as the tokenizer read it: what a pretrained model would have read (Wikipedia, for
    // the paper's models), test places included, as it is in the documents the tool returns.
    pretrainTexts: () => r.dataset.corpus.map((d) => `${d.title}: ${d.contents}`),
    scripted: (ex) => scriptedSearcher(ex, r.docs, style),
    renameEntities: (ex, texts, generator, stage, fit) =>
      entityRenamer(ex, texts, namePool, generator, {
        pieces,
        punctuated: own.punctuatedNames[STAGE_KEY[stage]],
        confusable: own.confusableNames[STAGE_KEY[stage]],
        noLonger: fit === 'no-longer' ? noLonger : undefined,
        typeAdjectives: { words: adjectives, share: own.typeAdjectives[STAGE_KEY[stage]] },
      }),
  };
}
