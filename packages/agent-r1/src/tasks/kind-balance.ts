/**
 * Balancing an example set's kinds, a data-shaping helper for tasks whose examples come in kinds of very
 * different sizes (multi-hop QA: 3-hop chains are 7% of the training questions, some 2-hop kinds under 2%,
 * so the rare kinds get few updates). An example of a kind with n examples weighs n^-balance, so a kind's
 * share of the draws goes as n^(1 - balance): 0 keeps the data's mix, 1 draws every kind equally often.
 * `kindBoost` then multiplies named kinds' weights (`compare_area=2`: twice that kind's share before the
 * weights are scaled back to mean 1), for a kind that needs more examples than its count says.
 */
import { parseNamedFactors } from '../options/named-factors.js';

/** How a stage mixes kinds, and the option keys that set it (named in errors). */
export interface KindMix {
  balanceKinds: number;
  /** `kind=factor`, comma-separated; '' none. */
  kindBoost: string;
  keys: { balanceKinds: string; kindBoost: string };
}

/** `compare_area=2, capital=0.5` → factor by kind; `setting` names the option in errors. */
export function parseKindBoost(spec: string, setting: string): Map<string, number> {
  return parseNamedFactors(spec, setting, 'kind');
}

/** Whether `mix` changes the data's mix at all: a balance above 0, or at least one boosted kind. */
export function mixesKinds(mix: KindMix): boolean {
  return mix.balanceKinds !== 0 || parseKindBoost(mix.kindBoost, mix.keys.kindBoost).size > 0;
}

/**
 * Each example's weight, with mean 1 (so a pass over `examples` keeps its size); all 1 when the mix is
 * neutral. A boosted kind that is not one of `known` (default: the examples' kinds) is an error naming the
 * option; a known kind that these examples lack (a small subset) boosts nothing.
 */
export function kindWeights<E>(
  kindOf: (example: E) => string,
  examples: readonly E[],
  mix: KindMix,
  known?: ReadonlySet<string>,
): number[] {
  if (!mixesKinds(mix)) return examples.map(() => 1);
  const boost = parseKindBoost(mix.kindBoost, mix.keys.kindBoost);
  const kinds = examples.map((e) => kindOf(e));
  const counts = new Map<string, number>();
  for (const k of kinds) counts.set(k, (counts.get(k) ?? 0) + 1);
  const valid = known ?? new Set(counts.keys());
  for (const k of boost.keys())
    if (!valid.has(k))
      throw new Error(
        `${mix.keys.kindBoost}: no example of kind '${k}' (kinds: ${[...valid].sort().join(', ')})`,
      );
  const raw = kinds.map((k) => counts.get(k)! ** -mix.balanceKinds * (boost.get(k) ?? 1));
  const mean = raw.reduce((s, w) => s + w, 0) / raw.length;
  return raw.map((w) => w / mean);
}
