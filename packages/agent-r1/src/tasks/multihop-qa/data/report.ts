/** The recall report of a built dataset (used by the CLI and docs/data.md). */
import { datasetStats } from './build.js';
import { bm25Retriever, measureRecall, type RecallRow, recallTableMarkdown } from './recall.js';
import type { MultihopDataset, QaExample } from './types.js';

/** Hop group of a question: comparisons are reported apart from bridge/chain questions. */
export function hopGroup(q: QaExample): string {
  if (q.kind.startsWith('compare_')) return `${q.hops}-hop comparison`;
  return q.hops === 1 ? '1-hop' : `${q.hops}-hop ${q.hops === 2 ? 'bridge' : 'chain'}`;
}

export interface DatasetReport {
  byHops: RecallRow[];
  byKind: RecallRow[];
  markdown: string;
}

/** Answer / support recall@1,3,5 of one BM25 retrieval with the question, over all splits. */
export function datasetReport(d: MultihopDataset): DatasetReport {
  const all = [...d.questions.train, ...d.questions.validation, ...d.questions.test];
  const retrieve = bm25Retriever(d.corpus);
  const byHops = measureRecall(all, retrieve, { groupBy: hopGroup });
  const byKind = measureRecall(all, retrieve, { groupBy: (q) => `${hopGroup(q)}: ${q.kind}` });
  const stats = datasetStats(d);
  const counts = [
    '| kind | hops | train | validation | test |',
    '| --- | --- | --- | --- | --- |',
    ...Object.entries(stats)
      .sort((a, b) => a[1].hops - b[1].hops || a[0].localeCompare(b[0]))
      .map(([k, r]) => `| ${k} | ${r.hops} | ${r.train} | ${r.validation} | ${r.test} |`),
    `| **total** | | ${d.questions.train.length} | ${d.questions.validation.length} | ${d.questions.test.length} |`,
  ].join('\n');
  const markdown = [
    `Corpus: ${d.corpus.length} documents.`,
    '',
    counts,
    '',
    recallTableMarkdown(byHops),
    '',
    recallTableMarkdown(byKind),
  ].join('\n');
  return { byHops, byKind, markdown };
}
