/**
 * Advantage estimators on padded per-token arrays [N, L] (see batch.ts), computed over ACTION tokens only.
 *
 * In Agent-R1's MDP the state after an action token is the next action token: the observation tokens the
 * environment appends between two actions are not decisions of the policy, so they are skipped. Credit
 * flows from the last action token of turn k straight to the first action token of turn k+1, γ is applied
 * once per action token, and observation, prompt and padding positions get advantage 0 (and return 0).
 * Rewards sitting on non-action positions are ignored: buildBatch places every reward on an action token.
 *
 * `actionMask` is normally the batch's action mask; passing its responseMask instead gives the paper's
 * ablation without the advantage mask (observation tokens then count as decisions).
 *
 * Conventions follow verl's core_algos.py (compute_gae_advantage_return, compute_grpo_outcome_advantage,
 * compute_reinforce_plus_plus_(baseline_)outcome_advantage, compute_rloo_outcome_advantage): a sequence's
 * score is the sum of its rewards; group statistics use the unbiased std; a group of one has mean 0 and
 * std 1; whitening is verl's masked_whiten (unbiased variance, eps 1e-8).
 */
import { type TokenRows, maskedWhiten, mean, std } from './metrics.js';

export interface AdvantageResult {
  /** [N, L] advantages, 0 off the action tokens. */
  advantages: Float64Array[];
  /** [N, L] returns (the critic's targets for GAE; equal to the advantages for the outcome estimators). */
  returns: Float64Array[];
}

export interface AdvantageInputs {
  /** [N, L] per-token rewards (buildBatch's rewards, possibly after applyKlPenalty). */
  rewards: TokenRows;
  /** [N, L] 1 on action tokens. */
  actionMask: TokenRows;
}

export interface GroupAdvantageInputs extends AdvantageInputs {
  /** Group id of each row (Trajectory.group): rows of one prompt. */
  groups: readonly number[];
}

function checkShapes(what: string, rows: Record<string, TokenRows>, mask: TokenRows): void {
  for (const [name, r] of Object.entries(rows)) {
    if (r.length !== mask.length)
      throw new Error(`${what}: ${name} has ${r.length} rows but actionMask has ${mask.length}`);
    r.forEach((row, i) => {
      if (row.length !== mask[i].length)
        throw new Error(
          `${what}: ${name} row ${i} has ${row.length} entries but its actionMask row has ${mask[i].length}`,
        );
    });
  }
}

/** Each row's score: the sum of its rewards on action tokens. */
export function sequenceScores(rewards: TokenRows, actionMask: TokenRows): number[] {
  checkShapes('sequenceScores', { rewards }, actionMask);
  return rewards.map((r, i) => {
    const m = actionMask[i];
    let s = 0;
    for (let t = 0; t < r.length; t++) if (m[t] !== 0) s += r[t];
    return s;
  });
}

/** One number per row written on every action token of that row (0 elsewhere). */
export function broadcastToActions(perRow: readonly number[], actionMask: TokenRows): Float64Array[] {
  return actionMask.map((m, i) => {
    const out = new Float64Array(m.length);
    for (let t = 0; t < m.length; t++) if (m[t] !== 0) out[t] = perRow[i];
    return out;
  });
}

function groupMembers(groups: readonly number[], n: number): Map<number, number[]> {
  if (groups.length !== n) throw new Error(`advantages: ${groups.length} group ids for ${n} rows`);
  const members = new Map<number, number[]>();
  groups.forEach((g, i) => {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  return members;
}

/** Per-row group mean and (unbiased) std of the scores; a group of one gets mean 0 and std 1, as in verl. */
function groupStats(scores: readonly number[], groups: readonly number[]): { mean: number[]; std: number[] } {
  const means = new Array<number>(scores.length);
  const stds = new Array<number>(scores.length);
  for (const rows of groupMembers(groups, scores.length).values()) {
    const s = rows.map((i) => scores[i]);
    // Identical scores get their own value as the mean exactly (no rounding), so they centre to exactly 0.
    const same = s.every((x) => x === s[0]);
    const m = rows.length > 1 ? (same ? s[0] : mean(s)) : 0;
    const d = rows.length > 1 ? (same ? 0 : std(s)) : 1;
    for (const i of rows) {
      means[i] = m;
      stds[i] = d;
    }
  }
  return { mean: means, std: stds };
}

export interface GaeOptions extends AdvantageInputs {
  /** [N, L] critic values V(s_t) at each token (only action tokens are read). */
  values: TokenRows;
  gamma: number;
  lambda: number;
  /** Whiten the advantages over all action tokens of the batch (default true, as verl). */
  whiten?: boolean;
}

/**
 * GAE with a critic: δ_t = r_t + γ V_next − V_t where "next" is the next action token of the row (0 after
 * the last one), A_t = δ_t + γλ A_next, returns R_t = A_t + V_t (before whitening).
 */
export function computeGaeAdvantages(options: GaeOptions): AdvantageResult {
  const { rewards, values, actionMask, gamma, lambda, whiten = true } = options;
  checkShapes('computeGaeAdvantages', { rewards, values }, actionMask);
  const advantages: Float64Array[] = [];
  const returns: Float64Array[] = [];
  rewards.forEach((r, i) => {
    const v = values[i];
    const m = actionMask[i];
    const adv = new Float64Array(r.length);
    const ret = new Float64Array(r.length);
    let nextValue = 0;
    let nextAdv = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      if (m[t] === 0) continue;
      const delta = r[t] + gamma * nextValue - v[t];
      nextAdv = delta + gamma * lambda * nextAdv;
      adv[t] = nextAdv;
      ret[t] = nextAdv + v[t];
      nextValue = v[t];
    }
    advantages.push(adv);
    returns.push(ret);
  });
  return { advantages: whiten ? maskedWhiten(advantages, actionMask) : advantages, returns };
}

export interface GrpoOptions extends GroupAdvantageInputs {
  /** Divide by the group's std (default true); false is Dr. GRPO's mean-only baseline. */
  normalizeByStd?: boolean;
  /** Added to the std (default 1e-6, verl's); a group of identical scores gives 0, not NaN. */
  eps?: number;
}

/** GRPO: (score − group mean) / (group std + eps), broadcast to every action token of the row. */
export function computeGrpoAdvantages(options: GrpoOptions): AdvantageResult {
  const { rewards, actionMask, groups, normalizeByStd = true, eps = 1e-6 } = options;
  const scores = sequenceScores(rewards, actionMask);
  const stats = groupStats(scores, groups);
  const adv = scores.map((s, i) => {
    const centred = s - stats.mean[i];
    return normalizeByStd && centred !== 0 ? centred / (stats.std[i] + eps) : centred;
  });
  const advantages = broadcastToActions(adv, actionMask);
  return { advantages, returns: advantages };
}

export interface ReinforcePlusPlusOptions extends AdvantageInputs {
  /** Discount per action token (default 1). */
  gamma?: number;
}

/**
 * REINFORCE++: the discounted return-to-go over action tokens, G_t = r_t + γ G_next, whitened over all
 * action tokens of the batch. Returns are the unwhitened G.
 */
export function computeReinforcePlusPlusAdvantages(options: ReinforcePlusPlusOptions): AdvantageResult {
  const { rewards, actionMask, gamma = 1 } = options;
  checkShapes('computeReinforcePlusPlusAdvantages', { rewards }, actionMask);
  const returns = rewards.map((r, i) => {
    const m = actionMask[i];
    const g = new Float64Array(r.length);
    let running = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      if (m[t] === 0) continue;
      running = r[t] + gamma * running;
      g[t] = running;
    }
    return g;
  });
  return { advantages: maskedWhiten(returns, actionMask), returns };
}

/**
 * REINFORCE++-baseline: score − group mean broadcast to the action tokens, then whitened over all action
 * tokens of the batch (so longer responses weigh more in the statistics, as in verl). Returns = advantages.
 */
export function computeReinforcePlusPlusBaselineAdvantages(options: GroupAdvantageInputs): AdvantageResult {
  const { rewards, actionMask, groups } = options;
  const scores = sequenceScores(rewards, actionMask);
  const stats = groupStats(scores, groups);
  const centred = broadcastToActions(
    scores.map((s, i) => s - stats.mean[i]),
    actionMask,
  );
  const advantages = maskedWhiten(centred, actionMask);
  return { advantages, returns: advantages };
}

/**
 * RLOO: score minus the mean score of the OTHER rows of its group (= n/(n−1)·(s − group mean)), broadcast
 * to the action tokens. A group of one keeps its raw score, as in verl.
 */
export function computeRlooAdvantages(options: GroupAdvantageInputs): AdvantageResult {
  const { rewards, actionMask, groups } = options;
  const scores = sequenceScores(rewards, actionMask);
  const adv = new Array<number>(scores.length);
  for (const rows of groupMembers(groups, scores.length).values()) {
    const n = rows.length;
    const total = rows.reduce((s, i) => s + scores[i], 0);
    for (const i of rows) adv[i] = n > 1 ? scores[i] - (total - scores[i]) / (n - 1) : scores[i];
  }
  const advantages = broadcastToActions(adv, actionMask);
  return { advantages, returns: advantages };
}

/** Per-token KL estimators between the policy and a reference, from log-probabilities (verl's kl_penalty). */
/** The KL estimators: k1 = log r, k2 = (log r)²/2, k3 = r - 1 - log r, low_var_kl = k3 clipped. */
export const KL_ESTIMATORS = ['k1', 'k2', 'k3', 'low_var_kl'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

/**
 * One token's KL estimate from logp (policy) and ref: k1 = logp − ref; k2 = ½(logp − ref)²;
 * k3 = low_var_kl = e^{ref−logp} − (ref − logp) − 1 with ref − logp clamped to ±20 and the result to ±10.
 */
export function klEstimate(logp: number, ref: number, estimator: KlEstimator = 'k1'): number {
  const d = logp - ref;
  switch (estimator) {
    case 'k1':
      return d;
    case 'k2':
      return 0.5 * d * d;
    case 'k3':
    case 'low_var_kl': {
      const kl = Math.min(20, Math.max(-20, -d));
      return Math.min(10, Math.max(-10, Math.exp(kl) - kl - 1));
    }
  }
}

export interface KlPenaltyOptions extends AdvantageInputs {
  /** [N, L] log-probs of the sampled tokens under the behaviour (old) policy. */
  logprobs: TokenRows;
  /** [N, L] log-probs of the same tokens under the reference policy. */
  refLogprobs: TokenRows;
  /** KL coefficient β. */
  beta: number;
  /** Default 'k1', verl's default for the in-reward penalty. */
  estimator?: KlEstimator;
}

export interface KlPenaltyResult {
  /** rewards − β·kl on action tokens (other positions unchanged). */
  rewards: Float64Array[];
  /** [N, L] the per-token KL estimate, 0 off the action tokens. */
  kl: Float64Array[];
  /** Mean over rows (with action tokens) of each row's mean KL, verl's actor/reward_kl_penalty. */
  meanKl: number;
}

/** KL in the reward: subtracts β·(logp − logp_ref) (k1 by default) from each action token's reward. */
export function applyKlPenalty(options: KlPenaltyOptions): KlPenaltyResult {
  const { rewards, actionMask, logprobs, refLogprobs, beta, estimator = 'k1' } = options;
  checkShapes('applyKlPenalty', { rewards, logprobs, refLogprobs }, actionMask);
  const out: Float64Array[] = [];
  const kl: Float64Array[] = [];
  const rowMeans: number[] = [];
  rewards.forEach((r, i) => {
    const m = actionMask[i];
    const penalised = Float64Array.from(r);
    const k = new Float64Array(r.length);
    let sum = 0;
    let count = 0;
    for (let t = 0; t < r.length; t++) {
      if (m[t] === 0) continue;
      k[t] = klEstimate(logprobs[i][t], refLogprobs[i][t], estimator);
      penalised[t] -= beta * k[t];
      sum += k[t];
      count++;
    }
    if (count > 0) rowMeans.push(sum / count);
    out.push(penalised);
    kl.push(k);
  });
  return { rewards: out, kl, meanKl: mean(rowMeans) };
}
