/**
 * The multi-hop task's process reward: credit for a search that retrieves one of the question's supporting
 * documents (the fact of one hop) for the first time in the episode. The outcome reward says only whether
 * the final answer was right; this one also tells apart, among wrong answers, the episodes whose searches
 * found the facts from those that never did, which is where a policy that cannot yet finish a chain learns
 * its next hop.
 */
import type { CallRecord } from '../../mdp/tool-env.js';
import type { Doc, QaExample } from './data/types.js';

/** Whether a search result (`Doc 1 (Title): …` lines) shows the document titled `title`. */
function shows(content: string, title: string): boolean {
  return content.includes(`(${title}):`);
}

/**
 * The reward of one search: `total` split evenly over the question's supporting documents, for each one
 * this call's results show and no earlier call's did. 0 for questions without supporting documents (user
 * data) and for calls that only repeat what earlier ones found.
 */
export function retrievalReward(
  example: QaExample,
  call: CallRecord,
  earlier: readonly CallRecord[],
  docs: ReadonlyMap<string, Doc>,
  total: number,
): number {
  const titles = example.supportingDocs.map((id) => docs.get(id)?.title ?? '').filter((t) => t !== '');
  if (titles.length === 0) return 0;
  const found = titles.filter((t) => shows(call.content, t) && !earlier.some((e) => shows(e.content, t)));
  return (total * found.length) / titles.length;
}
