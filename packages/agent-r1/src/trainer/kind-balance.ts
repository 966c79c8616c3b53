/**
 * Balancing an example set's kinds (`sft.balanceKinds`, `train.balanceKinds`; tasks with `kindOf` only):
 * an example of a kind with n examples weighs n^-strength, so a kind's share of the draws goes as
 * n^(1 - strength): 0 keeps the data's mix, 1 draws every kind equally often. Without it the rare kinds
 * (multi-hop QA: 3-hop chains are 7% of the training questions, some 2-hop kinds under 2%) get few updates.
 * `kindBoost` then multiplies named kinds' weights (`compare_area=2`: twice that kind's share before the
 * weights are scaled back to mean 1), for a kind that needs more examples than its count says.
 */
import type { Generator } from '@agent-r1/tensor';
import type { AgentTask } from '../tasks/task.js';

/** How a stage mixes kinds: `balanceKinds` (0–1), `kindBoost` (`kind=factor`, comma-separated; '' none). */
export interface KindMix {
  balanceKinds: number;
  kindBoost?: string;
}

/** `compare_area=2, capital=0.5` → factor by kind; `setting` names the config key in errors. */
export function parseKindBoost(spec: string, setting: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of spec.split(',')) {
    if (part.trim() === '') continue;
    const m = /^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$/.exec(part);
    const factor = m ? Number(m[2]) : Number.NaN;
    if (!m || !Number.isFinite(factor) || factor <= 0)
      throw new Error(`${setting}: expected kind=factor with a factor above 0, got '${part.trim()}'`);
    if (out.has(m[1])) throw new Error(`${setting}: kind '${m[1]}' is given twice`);
    out.set(m[1], factor);
  }
  return out;
}

/** Whether `mix` changes the data's mix at all: a balance above 0, or at least one boosted kind. */
export function mixesKinds(mix: KindMix, stage: string): boolean {
  return mix.balanceKinds !== 0 || parseKindBoost(mix.kindBoost ?? '', `${stage}.kindBoost`).size > 0;
}

/**
 * Each example's weight, with mean 1 (so a pass over `examples` keeps its size); all 1 when the mix is
 * neutral. `stage` ('sft' or 'train') names the config keys in the errors: for a task without kinds, and
 * for a boosted kind that no example has.
 */
export function kindWeights<E>(
  task: Pick<AgentTask<E>, 'name' | 'kindOf'>,
  examples: readonly E[],
  mix: KindMix,
  stage: string,
): number[] {
  if (!mixesKinds(mix, stage)) return examples.map(() => 1);
  const boost = parseKindBoost(mix.kindBoost ?? '', `${stage}.kindBoost`);
  const kindOf = task.kindOf;
  if (!kindOf) {
    const setting = mix.balanceKinds !== 0 ? `${stage}.balanceKinds` : `${stage}.kindBoost`;
    throw new Error(`${setting}: task '${task.name}' has no kinds of example to balance`);
  }
  const kinds = examples.map((e) => kindOf(e));
  const counts = new Map<string, number>();
  for (const k of kinds) counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const k of boost.keys())
    if (!counts.has(k))
      throw new Error(
        `${stage}.kindBoost: no example of kind '${k}' (kinds: ${[...counts.keys()].sort().join(', ')})`,
      );
  const raw = kinds.map((k) => counts.get(k)! ** -mix.balanceKinds * (boost.get(k) ?? 1));
  const mean = raw.reduce((s, w) => s + w, 0) / raw.length;
  return raw.map((w) => w / mean);
}

/**
 * How many times each example appears in one pass: its weight rounded down, plus one with the chance of
 * the fraction left (so the expected count is the weight). Whole weights draw nothing from `generator`.
 */
export function repeatCounts(weights: readonly number[], generator: Generator): number[] {
  return weights.map((w) => {
    const whole = Math.floor(w);
    return w === whole ? whole : whole + (generator.random() < w - whole ? 1 : 0);
  });
}
