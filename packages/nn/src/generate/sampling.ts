/** Picking the next token from one row of logits: greedy, temperature, top-k, top-p (nucleus). */

export interface SamplingOptions {
  /** 0 or `greedy` picks the arg-max. */
  temperature?: number;
  greedy?: boolean;
  /** Keep only the k most likely tokens (0 or undefined: all). */
  topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p (1 or undefined: all). */
  topP?: number;
}

export interface Sampled {
  token: number;
  /**
   * log p(token) under softmax(logits / temperature) over the whole vocabulary (before top-k/top-p), the
   * quantity a trainer recomputes from the same logits; at temperature 0, under softmax(logits). The arg-max
   * that `greedy` picks at a temperature above 0 is scored at that temperature, as a sample would be.
   */
  logprob: number;
}

function logSoftmaxAt(logits: ArrayLike<number>, scale: number, token: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] * scale);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] * scale - max);
  return logits[token] * scale - max - Math.log(sum);
}

/** Samples one token; `u` is a uniform number in [0, 1) from the caller's seeded generator. */
export function sampleToken(logits: ArrayLike<number>, u: number, options: SamplingOptions = {}): Sampled {
  const temperature = options.temperature ?? 1;
  if (options.greedy || temperature === 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    return { token: best, logprob: logSoftmaxAt(logits, temperature > 0 ? 1 / temperature : 1, best) };
  }
  if (temperature < 0) throw new Error(`sampleToken: temperature must be >= 0, got ${temperature}`);
  const scale = 1 / temperature;
  if (!(options.topK ?? 0) && (options.topP ?? 1) >= 1) return sampleFull(logits, scale, u);
  // Candidates in descending order of logit; ties broken by token id so the order is deterministic.
  let order = Array.from({ length: logits.length }, (_, i) => i).sort(
    (a, b) => logits[b] - logits[a] || a - b,
  );
  const k = options.topK ?? 0;
  if (k > 0) order = order.slice(0, k);
  const max = logits[order[0]] * scale;
  let probs = order.map((i) => Math.exp(logits[i] * scale - max));
  let total = probs.reduce((a, b) => a + b, 0);
  const p = options.topP ?? 1;
  if (p < 1) {
    let mass = 0;
    let keep = 0;
    while (keep < probs.length && mass < p * total) mass += probs[keep++];
    order = order.slice(0, Math.max(keep, 1));
    probs = probs.slice(0, order.length);
    total = probs.reduce((a, b) => a + b, 0);
  }
  let target = u * total;
  for (let i = 0; i < order.length; i++) {
    target -= probs[i];
    if (target < 0 || i === order.length - 1)
      return { token: order[i], logprob: logSoftmaxAt(logits, scale, order[i]) };
  }
  throw new Error('sampleToken: empty vocabulary');
}

/** Scratch for the exponentials of one row (grown as needed; sampling is synchronous, so one is enough). */
let exps = new Float64Array(0);

/**
 * Inverse-CDF sampling over the whole vocabulary in token order: no sort when nothing is truncated. Each
 * exponential is computed once and kept for the walk, which subtracts the same numbers in the same order as
 * computing them again would (same bits, half the exps).
 */
function sampleFull(logits: ArrayLike<number>, scale: number, u: number): Sampled {
  const n = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[i] * scale);
  if (exps.length < n) exps = new Float64Array(n);
  const e = exps;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const x = Math.exp(logits[i] * scale - max);
    e[i] = x;
    total += x;
  }
  let target = u * total;
  let token = n - 1;
  for (let i = 0; i < n; i++) {
    target -= e[i];
    if (target < 0) {
      token = i;
      break;
    }
  }
  return { token, logprob: logits[token] * scale - max - Math.log(total) };
}
