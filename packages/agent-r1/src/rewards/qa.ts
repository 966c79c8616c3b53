/**
 * Answer rewards for question answering, as in SQuAD and the Agent-R1 / Search-R1 experiments: answers are
 * compared after normalisation (lower case, no punctuation, no articles, single spaces).
 */

export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** 1 when the prediction equals any gold answer after normalisation, else 0. */
export function exactMatch(prediction: string, golds: readonly string[]): number {
  const p = normalizeAnswer(prediction);
  return golds.some((g) => normalizeAnswer(g) === p) ? 1 : 0;
}

function tokenF1(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction).split(' ').filter(Boolean);
  const g = normalizeAnswer(gold).split(' ').filter(Boolean);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Best token-level F1 of the prediction against any gold answer. */
export function f1Score(prediction: string, golds: readonly string[]): number {
  return golds.reduce((best, g) => Math.max(best, tokenF1(prediction, g)), 0);
}
