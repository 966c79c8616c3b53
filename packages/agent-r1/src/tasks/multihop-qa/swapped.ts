/**
 * The position probe of the comparison questions ("Which country has the larger area, X or Y?"): each one
 * again with its two options swapped. A policy that reads the facts answers both alike; one that answers
 * by position (always the second option) scores 1 on one of the two and 0 on the other. The copies are
 * reported as a group of the results table of their own, beside the comparisons as built, and left out of
 * 'all', so the other columns stay those of the test split.
 */
import type { QaExample } from './data/types.js';
import { comparisonOptions } from './scripted.js';

export const COMPARISONS_GROUP = 'comparisons';
export const SWAPPED_GROUP = 'comparisons swapped';
const SWAPPED_SUFFIX = '~swapped';

/** A comparison question ("X or Y?"): larger area, or which one is landlocked. */
export const isComparison = (q: QaExample) => q.kind === 'compare_area' || q.kind === 'compare_landlocked';

export function isSwappedComparison(q: QaExample): boolean {
  return q.id.endsWith(SWAPPED_SUFFIX);
}

/** The comparison `q` with its two options (and their documents, evidence and entities) swapped. */
export function swappedComparison(q: QaExample): QaExample | undefined {
  const options = isComparison(q) ? comparisonOptions(q.question) : undefined;
  if (!options) return undefined;
  const [x, y] = options;
  const at = q.question.lastIndexOf(`${x} or ${y}`);
  return {
    ...q,
    id: `${q.id}${SWAPPED_SUFFIX}`,
    question: `${q.question.slice(0, at)}${y} or ${x}${q.question.slice(at + x.length + y.length + 4)}`,
    supportingDocs: [...q.supportingDocs].reverse(),
    ...(q.evidence ? { evidence: [...q.evidence].reverse() } : {}),
    ...(q.entities ? { entities: [...q.entities].reverse() } : {}),
  };
}

/** `questions` with each comparison's swapped copy right after it (so a cut keeps the pairs together). */
export function withSwappedComparisons(questions: readonly QaExample[]): QaExample[] {
  return questions.flatMap((q) => {
    const swapped = swappedComparison(q);
    return swapped ? [q, swapped] : [q];
  });
}

/** The table groups of a question: its hop count, and the comparisons' own columns. */
export function multihopGroups(q: QaExample): number | string | (number | string)[] {
  if (isSwappedComparison(q)) return SWAPPED_GROUP;
  const hops = q.hops > 0 ? q.hops : 'all';
  return isComparison(q) ? [hops, COMPARISONS_GROUP] : hops;
}

/** For each swapped copy among `questions`, the original it was made from (when it is there too). */
export function swappedTwins(questions: readonly QaExample[]): (q: QaExample) => QaExample | undefined {
  const byId = new Map(questions.map((q) => [q.id, q]));
  return (q) => (isSwappedComparison(q) ? byId.get(q.id.slice(0, -SWAPPED_SUFFIX.length)) : undefined);
}
