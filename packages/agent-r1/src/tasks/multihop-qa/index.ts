/** The multi-hop QA task: dataset, search, the trainer task, scripted policies and baselines. */
export {
  naiveRagAnswer,
  naiveRagBaseline,
  noRetrievalBaseline,
  scriptedSearcherBaseline,
} from './baselines.js';
export { readAnswer, scriptedSearcher, splitTitle, statedType } from './scripted.js';
export { retrievalReward } from './retrieval-reward.js';
export {
  COMPARISONS_GROUP,
  SWAPPED_GROUP,
  isSwappedComparison,
  multihopGroups,
  swappedComparison,
  swappedTwins,
  withSwappedComparisons,
} from './swapped.js';
export { serveMultihopSearch, startMultihopSearchServer } from './serve.js';
export {
  DEFAULT_MULTIHOP_CACHE_DIR,
  DEFAULT_RETRIEVAL_REWARD,
  loadMultihopResources,
  MULTIHOP_SPECIAL_TOKENS,
  MULTIHOP_SNIPPET_CHARS,
  MULTIHOP_TOKENIZER_VERSION,
  MULTIHOP_CHAT_INSTRUCTION,
  type MultihopEnvOptions,
  type MultihopStyle,
  chatStyle,
  multihopFormat,
  multihopPrompt,
  multihopTools,
  tagStyle,
  tagVocabulary,
  type MultihopResources,
  multihopQaTask,
  type MultihopTaskOptions,
  multihopTokenizer,
  makeMultihopEnv,
  multihopAnswering,
  multihopEnvOptions,
  scoreAnswer,
  substringMatch,
} from './task.js';
export { type MultihopCorpusTaskOptions, multihopTaskFromCorpus } from './from-corpus.js';
