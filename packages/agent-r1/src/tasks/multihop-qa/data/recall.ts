/**
 * Measuring how "multi-hop" questions are: answer recall@k of ONE retrieval with the question text.
 * A small self-contained BM25 (Okapi, k1 = 1.2, b = 0.75, title + contents) is the default retriever, so the
 * measurement does not depend on the search tool; any other retriever can be passed in.
 */
import type { Doc, QaExample } from './types.js';

const STOP = new Set(
  'a an and are as at be by for from has have in is it its of on or that the this to was what which who whose with where when how does do did one'.split(
    ' ',
  ),
);

/** Lower-cased alphanumeric tokens without accents or stop words. */
export function tokenize(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0 && !STOP.has(t));
}

export type Retriever = (query: string, k: number) => Doc[];

/** Builds an in-memory BM25 retriever over `docs` (title and contents are indexed together). */
export function bm25Retriever(docs: readonly Doc[], k1 = 1.2, b = 0.75): Retriever {
  const postings = new Map<string, { doc: number; tf: number }[]>();
  const lengths = new Float64Array(docs.length);
  docs.forEach((d, i) => {
    const toks = tokenize(`${d.title} ${d.contents}`);
    lengths[i] = toks.length;
    const tf = new Map<string, number>();
    for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      const p = postings.get(t);
      if (p === undefined) postings.set(t, [{ doc: i, tf: n }]);
      else p.push({ doc: i, tf: n });
    }
  });
  const avgLen = lengths.reduce((s, x) => s + x, 0) / Math.max(1, docs.length);
  const n = docs.length;
  const scores = new Float64Array(n);
  return (query, k) => {
    const touched: number[] = [];
    for (const t of new Set(tokenize(query))) {
      const p = postings.get(t);
      if (p === undefined) continue;
      const idf = Math.log(1 + (n - p.length + 0.5) / (p.length + 0.5));
      for (const { doc, tf } of p) {
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]) / avgLen));
      }
    }
    // Top-k by insertion into a small sorted list (ties: lower doc index first).
    const top: number[] = [];
    const better = (x: number, y: number) => scores[x] > scores[y] || (scores[x] === scores[y] && x < y);
    for (const d of touched) {
      if (top.length === k && !better(d, top[k - 1])) continue;
      let i = Math.min(top.length, k - 1);
      if (top.length < k) top.push(d);
      else top[k - 1] = d;
      while (i > 0 && better(d, top[i - 1])) {
        top[i] = top[i - 1];
        i--;
      }
      top[i] = d;
    }
    const out = top.map((i) => docs[i]);
    for (const d of touched) scores[d] = 0;
    return out;
  };
}

/** Normalises for containment checks: accents stripped, lower case, non-alphanumerics to single spaces. */
export function normalizeText(s: string): string {
  return ` ${tokenizeKeepAll(s).join(' ')} `;
}

function tokenizeKeepAll(s: string): string[] {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

/** True when any answer occurs in `text` as a whole-word phrase (after normalisation). */
export function containsAnswer(text: string, answers: readonly string[]): boolean {
  const hay = normalizeText(text);
  return answers.some((a) => {
    const needle = normalizeText(a);
    return needle.trim().length > 0 && hay.includes(needle);
  });
}

export interface RecallRow {
  /** Group key, e.g. `hops=2` or a kind. */
  group: string;
  count: number;
  /** Answer recall@k per k: fraction of questions whose top-k documents contain an answer. */
  answerRecall: Record<number, number>;
  /** Support recall@k per k: fraction of questions whose top-k documents include every supporting doc. */
  supportRecall: Record<number, number>;
}

/**
 * Answer recall@k (and all-supporting-docs recall@k) of a single retrieval with the question text, grouped by
 * `groupBy` (default: hop count).
 */
export function measureRecall(
  questions: readonly QaExample[],
  retrieve: Retriever,
  options: { ks?: number[]; groupBy?: (q: QaExample) => string } = {},
): RecallRow[] {
  const ks = options.ks ?? [1, 3, 5];
  const groupBy = options.groupBy ?? ((q: QaExample) => `hops=${q.hops}`);
  const kMax = Math.max(...ks);
  const acc = new Map<string, { count: number; ans: number[]; sup: number[] }>();
  for (const q of questions) {
    const g = groupBy(q);
    let a = acc.get(g);
    if (a === undefined) {
      a = { count: 0, ans: ks.map(() => 0), sup: ks.map(() => 0) };
      acc.set(g, a);
    }
    a.count++;
    const top = retrieve(q.question, kMax);
    ks.forEach((k, j) => {
      const docs = top.slice(0, k);
      if (docs.some((d) => containsAnswer(`${d.title} ${d.contents}`, q.answers))) a.ans[j]++;
      const ids = new Set(docs.map((d) => d.id));
      if (q.supportingDocs.length > 0 && q.supportingDocs.every((id) => ids.has(id))) a.sup[j]++;
    });
  }
  return [...acc]
    .sort((x, y) => x[0].localeCompare(y[0]))
    .map(([group, a]) => ({
      group,
      count: a.count,
      answerRecall: Object.fromEntries(ks.map((k, j) => [k, a.ans[j] / a.count])),
      supportRecall: Object.fromEntries(ks.map((k, j) => [k, a.sup[j] / a.count])),
    }));
}

/** Renders recall rows as a Markdown table. */
export function recallTableMarkdown(rows: readonly RecallRow[], ks = [1, 3, 5]): string {
  const head = `| group | n | ${ks.map((k) => `ans R@${k}`).join(' | ')} | ${ks.map((k) => `sup R@${k}`).join(' | ')} |`;
  const sep = `|${' --- |'.repeat(2 + 2 * ks.length)}`;
  const body = rows.map(
    (r) =>
      `| ${r.group} | ${r.count} | ${ks.map((k) => r.answerRecall[k].toFixed(3)).join(' | ')} | ${ks
        .map((k) => r.supportRecall[k].toFixed(3))
        .join(' | ')} |`,
  );
  return [head, sep, ...body].join('\n');
}
