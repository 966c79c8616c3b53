/**
 * Model-free baselines of the multi-hop QA task, per hop count:
 * - naive RAG: one retrieval with the question itself (top-3), then the extractive reader (`readAnswer`:
 *   answer-type patterns such as `uses the NAME (CODE)` over the retrieved text, else the first title
 *   not named in the question);
 * - scripted searcher: the gold-chain searcher (`scriptedSearcher`) through the real ToolEnv;
 * - no retrieval: the commonest training answer of the question's kind.
 */
import type { EnvFactory } from '../../mdp/env.js';
import { type ScoredExample, addTwinAgreement, aggregateRows } from '../../evaluation/results.js';
import type { ResultRow } from '../task.js';
import { runTextEpisode } from '../../mdp/text-episode.js';
import type { Doc, QaExample } from './data/types.js';
import { comparisonOptions, readAnswer, scriptedSearcher } from './scripted.js';
import { formatSearchHits, type Searcher } from './search/index.js';
import { type MultihopStyle, scoreAnswer, tagStyle } from './env.js';
import { isSwappedComparison, multihopGroups, swappedTwins } from './swapped.js';

/** A baseline's rows from its answers to `questions`: groups, scores, and the swapped probes' agreement. */
function baselineRows(
  method: string,
  questions: readonly QaExample[],
  answers: readonly string[],
): ResultRow[] {
  // A user's question without a hop count is in no group but 'all' (the task then has no groups).
  const scored: ScoredExample[] = questions.map((q, i) => ({
    group: multihopGroups(q),
    inAll: !isSwappedComparison(q),
    scores: scoreAnswer(answers[i], q.answers),
  }));
  addTwinAgreement({ twinOf: swappedTwins(questions) }, questions, answers, scored);
  return aggregateRows(method, scored);
}

/**
 * No retrieval: answer directly from what the training questions teach, without reading anything: the
 * most frequent training answer of the question's kind (e.g. the commonest currency for currency
 * questions). For comparisons ("X or Y?") the first option; user data (kind 'user'), the overall commonest.
 */
export function noRetrievalBaseline(
  questions: readonly QaExample[],
  train: readonly QaExample[],
): ResultRow[] {
  const counts = new Map<string, Map<string, number>>();
  for (const q of train) {
    for (const key of [q.kind, '*']) {
      const c = counts.get(key) ?? new Map<string, number>();
      c.set(q.answers[0] ?? '', (c.get(q.answers[0] ?? '') ?? 0) + 1);
      counts.set(key, c);
    }
  }
  const commonest = (kind: string) => {
    const c = counts.get(kind) ?? counts.get('*');
    return c ? [...c.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0] : '';
  };
  return baselineRows(
    'no retrieval',
    questions,
    questions.map((q) => comparisonOptions(q.question)?.[0] ?? commonest(q.kind)),
  );
}

/** The naive-RAG answer to one question: retrieve once with the question, read the top-k text. */
export async function naiveRagAnswer(
  question: string,
  index: Searcher,
  k = 3,
  maxCharsPerDoc = 80,
): Promise<string> {
  const hits = await index.search(question, k);
  return readAnswer(question, formatSearchHits(hits, maxCharsPerDoc));
}

export async function naiveRagBaseline(
  questions: readonly QaExample[],
  index: Searcher,
  options: { k?: number; maxCharsPerDoc?: number } = {},
): Promise<ResultRow[]> {
  const answers = [];
  for (const q of questions)
    answers.push(await naiveRagAnswer(q.question, index, options.k ?? 3, options.maxCharsPerDoc ?? 80));
  return baselineRows('naive RAG', questions, answers);
}

export async function scriptedSearcherBaseline(
  questions: readonly QaExample[],
  makeEnv: EnvFactory<QaExample>,
  docs: ReadonlyMap<string, Doc>,
  style: MultihopStyle = tagStyle(),
): Promise<ResultRow[]> {
  const answers = [];
  for (const q of questions) {
    const ep = await runTextEpisode(makeEnv(), q, scriptedSearcher(q, docs, style));
    answers.push(typeof ep.info.answer === 'string' ? ep.info.answer : '');
  }
  return baselineRows('scripted searcher', questions, answers);
}
