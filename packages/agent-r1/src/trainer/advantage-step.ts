/** Chooses and runs the advantage estimator the config names, on a batch's per-token arrays. */
import {
  computeGaeAdvantages,
  computeGrpoAdvantages,
  computeReinforcePlusPlusAdvantages,
  computeReinforcePlusPlusBaselineAdvantages,
  computeRlooAdvantages,
  type AdvantageResult,
} from '../algorithms/advantages.js';
import type { TokenRows } from '../algorithms/metrics.js';
import type { AlgorithmConfig } from './config.js';

export interface AdvantageRequest {
  rewards: TokenRows;
  actionMask: TokenRows;
  groups: readonly number[];
  /** Critic values per token (PPO only). */
  values: TokenRows | null;
}

export function computeAdvantages(algorithm: AlgorithmConfig, r: AdvantageRequest): AdvantageResult {
  const base = { rewards: r.rewards, actionMask: r.actionMask };
  switch (algorithm.name) {
    case 'ppo':
      if (!r.values) throw new Error('computeAdvantages: PPO needs critic values');
      return computeGaeAdvantages({
        ...base,
        values: r.values,
        gamma: algorithm.gamma,
        lambda: algorithm.lambda,
      });
    case 'grpo':
      return computeGrpoAdvantages({ ...base, groups: r.groups, normalizeByStd: algorithm.normalizeStd });
    case 'reinforce++':
      return computeReinforcePlusPlusAdvantages({ ...base, gamma: algorithm.gamma });
    case 'reinforce++-baseline':
      return computeReinforcePlusPlusBaselineAdvantages({ ...base, groups: r.groups });
    case 'rloo':
      return computeRlooAdvantages({ ...base, groups: r.groups });
  }
}
