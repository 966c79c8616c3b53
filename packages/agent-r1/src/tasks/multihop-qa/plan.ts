/**
 * The plan a scripted demonstration thinks before each search (`taskOptions.plan`): what each search of a
 * question's chain is to find, in the question's own words, of which the searches still to come are
 * written (`<think> region country capital</think><search> city Calgary</search>`, then `country capital`,
 * then `capital`).
 *
 * Why: a chain's last search depends on the question's first words (`What is the capital…`), some 300
 * tokens back by then, and a small policy lost them there (it searched `Canada currency` for a capital, or
 * answered the country it had just read). Written before each search, the goal is a few tokens back, and
 * each plan is the previous one less its first word: a copy, which the copy head makes easy. The answer
 * and a compare call think nothing: a plan before the answer stood between it and the document or verdict
 * it copies, and the policy copied worse (docs/history.md). The policy writes the plan itself; the
 * environment ignores text outside the tags.
 */
import type { QaExample } from './data/types.js';

/** What the search of each hop finds, in the question's words; undefined for a kind it does not know. */
export function hopTargets(example: Pick<QaExample, 'kind' | 'question'>): string[] | undefined {
  switch (example.kind) {
    case 'capital':
      return ['capital'];
    case 'currency':
      return ['currency'];
    case 'place_country':
      return ['country'];
    case 'capital_currency':
    case 'place_currency':
      return ['country', 'currency'];
    case 'capital_language':
      return ['country', 'language'];
    case 'place_capital':
      return ['country', 'capital'];
    case 'sole_neighbor':
      return ['country', 'neighbour'];
    case 'neighbor_capital':
      // `…the only country that shares a land border with the country whose capital is …`
      return ['country', 'border', 'capital'];
    case 'compare_area':
      return ['area', 'area'];
    case 'compare_landlocked':
      return ['landlocked', 'landlocked'];
    case 'place_mid_capital':
    case 'place_mid_currency': {
      // `…the country containing the island group or island that …`: the middle place's noun as asked.
      const middle = /containing the (.+?) that /.exec(example.question)?.[1];
      if (middle === undefined) return undefined;
      return [middle, 'country', example.kind === 'place_mid_capital' ? 'capital' : 'currency'];
    }
    default:
      return undefined;
  }
}

/**
 * The plan before a search, once `searched` searches are done: the targets of the searches still to come;
 * undefined when none is left or the kind has no targets.
 */
export function planBefore(
  example: Pick<QaExample, 'kind' | 'question'>,
  searched: number,
): string | undefined {
  const left = hopTargets(example)?.slice(searched) ?? [];
  return left.length > 0 ? left.join(' ') : undefined;
}
