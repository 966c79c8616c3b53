/** The multi-hop QA task: dataset, search, the trainer task, scripted policies and baselines. */
export {
  naiveRagAnswer,
  naiveRagBaseline,
  noRetrievalBaseline,
  scriptedSearcherBaseline,
} from './baselines.js';
export { readAnswer, readArea, scriptedSearcher, splitTitle, statedType } from './scripted.js';
export {
  COMPARE_TOOL,
  type CompareArgs,
  compareTool,
  compareValuesText,
  type LabelledValue,
  ONLY,
  onlyOneHolding,
  parseCompareItems,
  parseCompareValues,
  type Statement,
} from './compare-tool.js';
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
  COMPARE_SPECIAL_TOKENS,
  DEFAULT_RETRIEVAL_REWARD,
  MULTIHOP_CHAT_INSTRUCTION,
  MULTIHOP_SNIPPET_CHARS,
  MULTIHOP_SPECIAL_TOKENS,
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
} from './env.js';
export {
  DEFAULT_MULTIHOP_CACHE_DIR,
  loadMultihopResources,
  MULTIHOP_TOKENIZER_VERSION,
  type MultihopResources,
  multihopQaTask,
  type MultihopTaskOptions,
  multihopTokenizer,
} from './task.js';
export { type MultihopCorpusTaskOptions, multihopTaskFromCorpus } from './from-corpus.js';
