/**
 * The plan a scripted demonstration thinks before each action (`taskOptions.plan`): what each search of a
 * question's chain is to find, in the question's own words, of which the searches still to come are
 * written (`<think> region country capital</think><search> city Calgary</search>`, then `country capital`,
 * then `capital`, and the last again before the answer).
 *
 * Why: a chain's last search and its answer depend on the question's first words (`What is the capital…`),
 * some 300 tokens back by then, and a small policy lost them there (it searched `Canada currency` for a
 * capital, or answered the country it had just read). Written before each action, the goal is a few
 * tokens back, and each plan is the previous one less its first word: a copy, which the copy head makes
 * easy. The policy writes it itself; the environment ignores text outside the tags.
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
 * The plan before an action, once `searched` searches are done: the targets of the searches still to come,
 * or the last target when none is left (before a compare call or the answer); undefined where the kind has
 * no targets.
 */
export function planBefore(
  example: Pick<QaExample, 'kind' | 'question'>,
  searched: number,
): string | undefined {
  const targets = hopTargets(example);
  if (targets === undefined) return undefined;
  return targets.slice(Math.min(searched, targets.length - 1)).join(' ');
}
