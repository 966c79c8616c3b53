/**
 * Demonstrations that recover from a refused compare call (`taskOptions.compareRecovery`): in a share of the
 * comparison questions, the scripted demonstration's first compare call is faulty the way a trained policy's
 * were (an item's figure or property left out, `United States 9,372,610 ; Angola`; or one item written for
 * both, `Anguilla 91 ; Anguilla 91`), the tool refuses it, and the demonstration calls again as it should.
 * The faulty action is shown, not imitated (the warm start gives a refused call's tokens no weight): what
 * the policy learns is the second call, made after a refusal. Without it the policy had never read a
 * refusal, and after one it guessed between the two options.
 */
import { labelOf } from './compare-tool.js';
import type { QaExample } from './data/types.js';

/** Turns a compare call's values (`A 91 ; B 199`) into the faulty values a demonstration first writes. */
export type CompareFault = (values: string) => string;

/** 32-bit FNV-1a: a choice that follows the example's id, not the order or seed of a run. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The fault of this example's first compare call, or undefined where it has none: a comparison question
 * whose id falls in the first `share` of the hash's range. Which item is faulty, and how, follow the hash too.
 */
export function compareFault(
  example: Pick<QaExample, 'id' | 'kind'>,
  share: number,
): CompareFault | undefined {
  if (share <= 0 || !example.kind.startsWith('compare')) return undefined;
  const h = hashOf(example.id);
  if ((h % 1024) / 1024 >= share) return undefined;
  const item = (h >>> 10) & 1;
  const writtenTwice = ((h >>> 11) & 1) === 1;
  return (values) => {
    const items = values.split(' ; ');
    if (items.length !== 2) return values;
    if (writtenTwice) items[1 - item] = items[item];
    else items[item] = labelOf(items[item]) ?? items[item];
    return items.join(' ; ');
  };
}
