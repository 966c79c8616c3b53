/** Multi-hop QA data: the built-in WordNet + world-countries dataset, JSONL loaders and the recall check. */
export { type BuildOptions, buildMultihopDataset, DATASET_VERSION, datasetStats } from './build.js';
export {
  corpusFromRecords,
  JsonlError,
  loadCorpusJsonl,
  loadQuestionsJsonl,
  MAX_HOPS,
  parseJsonl,
  type QuestionChecks,
  questionsFromRecords,
  toJsonl,
  writeJsonlAtomic,
} from './jsonl.js';
export {
  bm25Retriever,
  containsAnswer,
  measureRecall,
  normalizeText,
  type RecallRow,
  recallTableMarkdown,
  type Retriever,
  tokenize,
} from './recall.js';
export { type DatasetReport, datasetReport, hopGroup } from './report.js';
export { type KnowledgeSources, loadKnowledgeSources, type WorldCountry } from './sources.js';
export type { Doc, MultihopDataset, QaExample, QaKind, QaSplits } from './types.js';
export { parseWordNetData, type WnPointer, type WnSynset } from './wordnet.js';
