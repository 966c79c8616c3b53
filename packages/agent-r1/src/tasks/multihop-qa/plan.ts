/**
 * The plan a scripted demonstration thinks before each tool call (`taskOptions.plan`): what each search of a
 * question's chain is to find, in the question's own words, then `compare` where the episode compares with
 * the tool, of which the calls still to come are written (`<think> region country capital</think><search>
 * city Calgary</search>`, then `country capital`, then `capital`; an area comparison `area area compare`,
 * `area compare`, then `<think> compare</think><compare> …`), and before the answer the empty plan
 * (`<think></think><answer> …`).
 *
 * Why: a chain's last search depends on the question's first words (`What is the capital…`), some 300
 * tokens back by then, and a small policy lost them there (it searched `Canada currency` for a capital, or
 * answered the country it had just read). Written before each call, the goal is a few tokens back, and
 * each plan is the previous one less its first word: a copy, which the copy head makes easy. The compare
 * call is planned too: after a second result a 2-hop chain answers and an area comparison compares, and
 * without it in the plan that choice hung on the question's first words again (RL shifted it towards the
 * chains' answer, docs/history.md). The answer follows the empty plan, so that answering is a plan too:
 * the next plan is always the last one less its first word, and nothing left is `<think></think>`. Without
 * it, answering after a one-word plan was a rule of its own, and a policy that also learnt the landlocked
 * comparisons' three-step plan broke it: after `In which country is X located?` it read the country, then
 * wrote an empty plan and searched on. Empty, it is two tokens between the answer and the document or
 * verdict it copies (a plan of words there made the policy copy worse). The policy writes the plan itself;
 * the environment ignores text outside the tags.
 */
import type { QaExample } from './data/types.js';
import type { CompareOptions } from './env.js';

/** The compare call's word in a plan: the tool's name. */
export const COMPARE_STEP = 'compare';

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
 * Whether the scripted searcher calls the compare tool in a question of this kind: an area comparison where
 * the episode has the tool, a landlocked one where it compares statements too.
 */
export function comparesWithTool(kind: QaExample['kind'], tools: CompareOptions): boolean {
  if (!tools.compareTool) return false;
  return kind === 'compare_area' || (kind === 'compare_landlocked' && tools.compareStatements === true);
}

/**
 * The plan before a tool call, once `called` calls (searches and compare calls) are done: the searches'
 * targets still to come, then `compare` where the question is compared with the tool; undefined when
 * nothing is left (the answer's empty plan) or the kind has no targets.
 */
export function planBefore(
  example: Pick<QaExample, 'kind' | 'question'>,
  called: number,
  tools: CompareOptions = {},
): string | undefined {
  const targets = hopTargets(example);
  if (targets === undefined) return undefined;
  const steps = comparesWithTool(example.kind, tools) ? [...targets, COMPARE_STEP] : targets;
  const left = steps.slice(called);
  return left.length > 0 ? left.join(' ') : undefined;
}
