/**
 * A copy head (a pointer-generator output layer, See et al. 2017): the next-token distribution mixes the
 * LM head's with attention over the tokens of the context,
 *
 *   p(w) = g · softmax(logits)(w) + (1 − g) · Σ_{j : x_j = w} a_j,   g = σ(gate · h),  a = softmax(q · K / √d),
 *
 * so that a small model can repeat a name it has only just seen (a search query taken from the question,
 * an answer read from a document) without having learned that name. Its output is logits whose softmax
 * is p, so sampling, log-probs, entropy and KL downstream are unchanged.
 *
 * Queries and keys are projections of the final hidden states, without rotary positions (copying matches
 * content). The key of position j, which stands for token x_j, is projected from the hidden state *before*
 * it (j − 1; zeros at j = 0): what led up to x_j. So "the token that followed the one I just wrote" (the
 * induction pattern) and "the name after `city`" are each one dot product, with no circuit in the trunk
 * to learn first.
 *
 * With `match`, two learned weights add exact-match evidence to each score: the token before key j equals
 * the query's own token (w₁), and the one before that equals the query's previous token too (w₂). A name
 * being copied continues where the last one or two tokens written match the context, even for tokens the
 * small model's hidden states do not tell apart well (measured in docs/history.md).
 *
 * With `matchSpan` as well, a third learned weight scores how far the match goes back beyond two tokens
 * (the span of tokens before key j that equal the last ones written, less two, at most SPAN_CAP − 2). In a
 * figure such as `1,285,216` (one token a digit) the last two tokens written, `,2`, occur twice, and two
 * tokens of evidence alone loop (`1,285,285,…`); the longer span tells the two apart. A name of several
 * words copied from one document likewise continues from the place it was copied from.
 *
 * With `matchGate` as well, the two weights depend on the query: w + h · M (M [dim, 2], zeros at first).
 * Global weights pull every query toward the continuation of its last token's earlier occurrences, so the
 * first name of a second search leans toward repeating the first search's name (both follow `<search>`);
 * a query-dependent weight can turn the evidence off where a new name starts. It can as well turn it up
 * where copying paid in training, and then carry a copy on past the end of a name it has never seen,
 * which held-out questions punish; so the `multihop` preset leaves it off (measured in docs/history.md).
 *
 * With `sourceGate`, the gate also reads what the attention points at (See et al.'s context vector):
 * x = gate · h + Σ_j a_j · (source · h_j), h_j the hidden state at context token x_j. Whether to stop
 * copying depends on the token a copy would produce next (` is` after a name: stop), which the query's own
 * hidden state does not hold.
 */
import {
  type Tensor,
  concat,
  full,
  gather,
  logprobs,
  scatterAdd,
  tensor,
  tidy,
  where,
  zeros,
} from '@agent-r1/tensor';
import { Module } from '../module.js';
import { type InitOptions, zerosInit } from './init.js';
import { Linear } from './linear.js';

/** Added to the copy mass before its log: keeps it finite where it is 0 (float32: 1e-30 is normal). */
const FLOOR = 1e-30;

/** The context a copy head reads, for queries h [B, T, D] over S context positions. */
export interface CopyContext {
  /** [B, S, D]: the key of each context position (`keysOf`, or a cache's). */
  keys: Tensor;
  /** Row b: the S token ids the keys stand for. */
  ids: readonly ArrayLike<number>[];
  /** Bool [B, T, S]: the keys each query sees; null: causal over the given tokens (S = T, t sees 0..t). */
  keep: Tensor | null;
  /** Where each query's own token sits in `ids` (row b: T positions; default: query t at t), for `match`. */
  queryAt?: readonly ArrayLike<number>[];
  /** [B, S, 1]: each context token's say in the gate (`sourcesOf`), for `sourceGate`. */
  sources?: Tensor;
}

/** The match weights' starting value: a mild preference for continuing a match, learned from there. */
const MATCH_INIT = 1;
/** The longest match span `matchSpan` counts (spans beyond are scored as this long). */
export const SPAN_CAP = 8;

export class CopyHead extends Module {
  readonly query: Linear;
  readonly key: Linear;
  readonly gate: Linear;
  /** [2]: the weights of the one- and two-token match evidence, or null without `match`. */
  readonly match: Tensor | null;
  /** [1]: the weight of the match span beyond two tokens, or null without `matchSpan`. */
  readonly matchSpan: Tensor | null;
  /** [dim, 2]: how each query's hidden state moves the two match weights, or null without `matchGate`. */
  readonly matchGate: Tensor | null;
  /** Each context token's say in the gate, or null without `sourceGate`. */
  readonly source: Linear | null;

  constructor(
    readonly dim: number,
    options: InitOptions & {
      std: number;
      match?: boolean;
      matchSpan?: boolean;
      matchGate?: boolean;
      sourceGate?: boolean;
    },
  ) {
    super();
    this.query = this.module('query', new Linear(dim, dim, { ...options, bias: false }));
    this.key = this.module('key', new Linear(dim, dim, { ...options, bias: false }));
    this.gate = this.module('gate', new Linear(dim, 1, { ...options, bias: true }));
    this.match = options.match
      ? this.parameter('match', full([2], MATCH_INIT, { dtype: options.dtype, device: options.device }))
      : null;
    this.source = options.sourceGate
      ? this.module('source', new Linear(dim, 1, { ...options, bias: false }))
      : null;
    if (options.matchGate && !options.match) throw new Error('CopyHead: matchGate needs match');
    if (options.matchSpan && !options.match) throw new Error('CopyHead: matchSpan needs match');
    this.matchSpan = options.matchSpan
      ? this.parameter('matchSpan', full([1], MATCH_INIT, { dtype: options.dtype, device: options.device }))
      : null;
    // Zeros: a new head starts as one with global weights (and draws nothing from the generator).
    this.matchGate = options.matchGate ? this.parameter('matchGate', zerosInit([dim, 2], options)) : null;
  }

  /** Sources [B, T, 1] of hidden states h [B, T, dim] (position t's own), or undefined without `sourceGate`. */
  sourcesOf(h: Tensor): Tensor | undefined {
    return this.source?.forward(h);
  }

  /** The context of a pass over whole sequences: hidden states h [B, T, dim] of the tokens `ids`. */
  contextOf(h: Tensor, ids: readonly ArrayLike<number>[]): CopyContext {
    return { keys: this.keysOf(h), ids, keep: null, sources: this.sourcesOf(h) };
  }

  /**
   * Next keys [B, T, dim] of hidden states h [B, T, dim]: row t is the key of position t + 1. A cache
   * keeps them one slot ahead; `keysOf` lays them out for a pass without one.
   */
  nextKeys(h: Tensor): Tensor {
    return this.key.forward(h);
  }

  /** Keys [B, T, dim] of positions 0..T−1 of h [B, T, dim], from a pass over the whole sequence. */
  keysOf(h: Tensor): Tensor {
    return tidy(() => {
      const [B, T, D] = h.shape;
      const first = zeros([B, Math.min(T, 1), D], { dtype: h.dtype, device: h.device });
      if (T <= 1) return first;
      return concat([first, this.nextKeys(h.narrow(1, 0, T - 1))], 1);
    });
  }

  /**
   * Logits [B, T, V] whose softmax is the mixture, for hidden states h [B, T, D] and LM logits [B, T, V],
   * over a context of S positions.
   *
   * Only the ids in the context change: with Z = Σ exp(logits) and g = σ(x),
   *   out_v = log(exp(logits_v) + Z · (1 − g)/g · c_v),   c_v = Σ_{j : x_j = v} a_j,
   * so softmax(out) = g · softmax(logits) + (1 − g) · c, and out = logits wherever c_v = 0: the work on
   * [B, T, V] is one log-prob gather and one scatter, the rest is on the U distinct ids of a row.
   */
  forward(h: Tensor, logits: Tensor, context: CopyContext): Tensor {
    const { keys, ids: keyIds, keep, queryAt, sources } = context;
    if (this.source && !sources) throw new Error('CopyHead: a head with sourceGate needs context.sources');
    return tidy(() => {
      const [B, T] = h.shape;
      const S = keys.shape[1];
      const device = h.device;
      const { slots, ids, valid, distinct } = distinctIds(keyIds, S);
      let scores = this.query
        .forward(h)
        .matmul(keys.transpose(1, 2))
        .mul(1 / Math.sqrt(this.dim));
      if (this.match) {
        const at = queryAt ?? Array.from({ length: B }, () => Array.from({ length: T }, (_, t) => t));
        const { one, two, span } = matchEvidence(keyIds, at, T, S, this.matchSpan !== null);
        const options = { shape: [B, T, S], dtype: h.dtype, device };
        // [2] or, with matchGate, [B, T, 2]: broadcast over the S keys.
        const weights = this.matchGate ? h.matmul(this.matchGate).add(this.match) : this.match;
        const last = weights.rank - 1;
        scores = scores
          .add(tensor(one, options).mul(weights.narrow(last, 0, 1)))
          .add(tensor(two, options).mul(weights.narrow(last, 1, 1)));
        if (this.matchSpan) scores = scores.add(tensor(span!, options).mul(this.matchSpan));
      }
      const attention = where(keep ?? causalKeep(T, device), scores, -1e9).softmax(-1);
      // c over the distinct ids: [B, T, U].
      const slotIndex = tensor(slots, { shape: [B, 1, S], device })
        .expand([B, T, S])
        .contiguous();
      const copied = scatterAdd(zeros([B, T, distinct], { dtype: h.dtype, device }), 2, slotIndex, attention);
      const idIndex = tensor(ids, { shape: [B, 1, distinct], device })
        .expand([B, T, distinct])
        .contiguous();
      const atIds = gather(logits, 2, idIndex);
      // log Z = logits_v − log_softmax(logits)_v, at the first distinct id (any v would do).
      const first = idIndex.narrow(2, 0, 1);
      const logZ = atIds.narrow(2, 0, 1).sub(logprobs(logits, first.squeeze(2)).unsqueeze(2));
      // log(Z · (1 − g)/g · c) with (1 − g)/g = exp(−x); the floor keeps log c finite where c = 0.
      let gateLogit = this.gate.forward(h);
      if (this.source) gateLogit = gateLogit.add(attention.matmul(sources!));
      const added = logZ.sub(gateLogit).add(copied.add(FLOOR).log());
      const top = atIds.maximum(added).detach();
      const mixed = atIds.sub(top).exp().add(added.sub(top).exp()).log().add(top);
      const mask = tensor(valid, { shape: [B, 1, distinct], dtype: h.dtype, device });
      return scatterAdd(logits, 2, idIndex, mixed.sub(atIds).mul(mask));
    });
  }
}

/**
 * The distinct ids of each row's keys: slots [B·S] (key j of row b → its id's slot), ids [B·U] (row b's
 * distinct ids, padded with its first), valid [B·U] (1 for a real slot, 0 for padding), U = distinct.
 */
function distinctIds(
  keyIds: readonly ArrayLike<number>[],
  S: number,
): { slots: Int32Array; ids: Int32Array; valid: Float64Array; distinct: number } {
  const B = keyIds.length;
  const slots = new Int32Array(B * S);
  const rows: number[][] = [];
  for (let b = 0; b < B; b++) {
    const slotOf = new Map<number, number>();
    for (let j = 0; j < S; j++) {
      const id = keyIds[b][j];
      let slot = slotOf.get(id);
      if (slot === undefined) {
        slot = slotOf.size;
        slotOf.set(id, slot);
      }
      slots[b * S + j] = slot;
    }
    rows.push([...slotOf.keys()]);
  }
  const distinct = rows.reduce((most, r) => Math.max(most, r.length), 1);
  const ids = new Int32Array(B * distinct);
  const valid = new Float64Array(B * distinct);
  rows.forEach((row, b) => {
    for (let u = 0; u < distinct; u++) {
      ids[b * distinct + u] = u < row.length ? row[u] : (row[0] ?? 0);
      valid[b * distinct + u] = u < row.length ? 1 : 0;
    }
  });
  return { slots, ids, valid, distinct };
}

/**
 * The match evidence [B·T·S] of queries at positions queryAt of keyIds: `one` (0/1) where the token before
 * key j is the query's token, `two` (0/1) where in addition the token before that is the query's previous
 * token, and with `withSpan`, `span`: how many more tokens before those match too (0 to SPAN_CAP − 2).
 */
export function matchEvidence(
  keyIds: readonly ArrayLike<number>[],
  queryAt: readonly ArrayLike<number>[],
  T: number,
  S: number,
  withSpan = false,
): { one: Float32Array; two: Float32Array; span?: Float32Array } {
  const B = keyIds.length;
  const one = new Float32Array(B * T * S);
  const two = new Float32Array(B * T * S);
  const span = withSpan ? new Float32Array(B * T * S) : undefined;
  for (let b = 0; b < B; b++) {
    const row = keyIds[b];
    // Token → the keys j whose previous token (j − 1) it is.
    const follows = new Map<number, number[]>();
    for (let j = 1; j < S; j++) {
      const list = follows.get(row[j - 1]);
      if (list) list.push(j);
      else follows.set(row[j - 1], [j]);
    }
    for (let t = 0; t < T; t++) {
      const p = queryAt[b][t];
      const base = (b * T + t) * S;
      for (const j of follows.get(row[p]) ?? []) {
        one[base + j] = 1;
        if (j >= 2 && p >= 1 && row[j - 2] === row[p - 1]) {
          two[base + j] = 1;
          if (span) span[base + j] = sharedSuffix(row, j - 1, p) - 2;
        }
      }
    }
  }
  return { one, two, span };
}

/** How many tokens (at most SPAN_CAP) end alike at `a` and at `b` of row: row[a − k] = row[b − k] below it. */
function sharedSuffix(row: ArrayLike<number>, a: number, b: number): number {
  let n = 0;
  while (n < SPAN_CAP && a - n >= 0 && row[a - n] === row[b - n]) n++;
  return n;
}

/** Bool [T, T]: query t sees keys 0..t. */
function causalKeep(T: number, device: string): Tensor {
  const data = new Uint8Array(T * T);
  for (let t = 0; t < T; t++) data.fill(1, t * T, t * T + t + 1);
  return tensor(data, { shape: [T, T], dtype: 'bool', device });
}
