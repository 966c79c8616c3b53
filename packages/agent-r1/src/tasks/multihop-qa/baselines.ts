/**
 * Model-free baselines of the multi-hop QA task, per hop count:
 * - naive RAG: one retrieval with the question itself (top-3), then the extractive reader (`readAnswer`:
 *   answer-type patterns such as `uses the NAME (CODE)` over the retrieved text, else the first title
 *   not named in the question);
 * - scripted searcher: the gold-chain searcher (`scriptedSearcher`) through the real ToolEnv.
 */
import type { EnvFactory } from '../../mdp/env.js';
import { runTextEpisode } from '../../mdp/text-episode.js';
import type { Doc, QaExample } from './data/types.js';
import { readAnswer, scriptedSearcher } from './scripted.js';
import { formatSearchHits, type Searcher } from './search/index.js';
import { multihopPrompt, scoreAnswer } from './task.js';

export interface ResultRow {
  method: string;
  /** Hop count, or 'all'. */
  hops: number | 'all';
  n: number;
  em: number;
  f1: number;
  subEm: number;
}

function aggregate(
  method: string,
  scored: { hops: number; em: number; f1: number; subEm: number }[],
): ResultRow[] {
  const groups = new Map<number | 'all', typeof scored>();
  for (const s of scored) {
    groups.set(s.hops, [...(groups.get(s.hops) ?? []), s]);
  }
  groups.set('all', scored);
  const keys = [...groups.keys()].sort((a, b) => (a === 'all' ? 1 : b === 'all' ? -1 : a - b));
  return keys.map((hops) => {
    const xs = groups.get(hops) ?? [];
    const mean = (k: 'em' | 'f1' | 'subEm') =>
      xs.length === 0 ? 0 : xs.reduce((s, x) => s + x[k], 0) / xs.length;
    return { method, hops, n: xs.length, em: mean('em'), f1: mean('f1'), subEm: mean('subEm') };
  });
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
  const scored = [];
  for (const q of questions) {
    const answer = await naiveRagAnswer(q.question, index, options.k ?? 3, options.maxCharsPerDoc ?? 80);
    scored.push({ hops: q.hops, ...scoreAnswer(answer, q.answers) });
  }
  return aggregate('naive RAG', scored);
}

export async function scriptedSearcherBaseline(
  questions: readonly QaExample[],
  makeEnv: EnvFactory<QaExample>,
  docs: ReadonlyMap<string, Doc>,
): Promise<ResultRow[]> {
  const scored = [];
  for (const q of questions) {
    const ep = await runTextEpisode(makeEnv(), q, scriptedSearcher(q, docs, multihopPrompt(q)));
    const answer = typeof ep.info.answer === 'string' ? ep.info.answer : '';
    scored.push({ hops: q.hops, ...scoreAnswer(answer, q.answers) });
  }
  return aggregate('scripted searcher', scored);
}

/** A markdown table of result rows: method, hops, n, EM, F1, substring EM. */
export function formatResultsTable(rows: readonly ResultRow[]): string {
  const f = (x: number) => x.toFixed(3);
  return [
    '| method | hops | n | EM | F1 | subEM |',
    '|---|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.method} | ${r.hops} | ${r.n} | ${f(r.em)} | ${f(r.f1)} | ${f(r.subEm)} |`),
  ].join('\n');
}
