/**
 * Batched autoregressive generation over a KV cache: one prefill (`extend` with each prompt), then one token
 * per step for every unfinished row. Rows finish independently on a stop token, a stop string or the token
 * limit. The cache is returned so that a caller can append a tool observation (`extend`) and generate on.
 */
import {
  type Generator,
  type Tensor,
  getDefaultGenerator,
  noGrad,
  rand,
  tensor,
  tidy,
} from '@agent-r1/tensor';
import type { TransformerLM } from '../models/transformer-lm.js';
import type { KVCache } from './kv-cache.js';
import { type SamplingOptions, sampleToken } from './sampling.js';

export interface GenerateOptions extends SamplingOptions {
  maxNewTokens: number;
  /** Stop tokens for every row, or one list per row; the stop token is kept in the output. */
  stopTokens?: readonly number[] | readonly (readonly number[])[];
  /** Stop when the decoded new text contains one of these (needs `decode`); the text is not cut. */
  stopStrings?: readonly string[];
  decode?: (ids: readonly number[]) => string;
  generator?: Generator;
  /** Continue these cached sequences instead of starting new ones; prompts are then the tokens to append. */
  cache?: KVCache;
}

export type FinishReason = 'stop_token' | 'stop_string' | 'length';

export interface GenerateResult {
  tokens: number[][];
  /** Log-probability of each sampled token (see `Sampled.logprob`). */
  logprobs: number[][];
  finishReasons: FinishReason[];
  /** Holds every prompt and generated token; dispose it when done. */
  cache: KVCache;
}

/** Right-pads rows into an int32 [B, T] batch. */
function padBatch(
  rows: readonly (readonly number[])[],
  device: string | undefined,
): { ids: Tensor; lengths: number[] } {
  const T = Math.max(1, ...rows.map((r) => r.length));
  const data = new Int32Array(rows.length * T);
  for (const [b, r] of rows.entries()) data.set(r, b * T);
  return { ids: tensor(data, { shape: [rows.length, T], device }), lengths: rows.map((r) => r.length) };
}

/**
 * Appends tokens to each row of the cache (a prompt, an observation, or one sampled token; rows may add
 * none) and returns the logits at each row's last new position as plain arrays (null for rows that added none).
 *
 * A batch pass pads every row to the longest one, so when a few rows append many tokens (an observation)
 * while the rest add one (decoding), those few go through their own pass over a cache of just their rows:
 * otherwise every row of the batch would compute a whole observation's length of padding.
 */
export function extend(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
): (Float64Array | null)[] {
  if (rows.length !== cache.batch)
    throw new Error(`extend: got ${rows.length} rows for a cache of ${cache.batch}`);
  const long = rows.flatMap((r, b) => (r.length > 1 ? [b] : []));
  if (long.length === 0 || long.length === rows.length) return extendPass(model, cache, rows);
  const out = rows.some((r) => r.length === 1)
    ? extendPass(
        model,
        cache,
        rows.map((r) => (r.length > 1 ? [] : r)),
      )
    : rows.map(() => null);
  const sub = cache.gather(long);
  try {
    const logits = extendPass(
      model,
      sub,
      long.map((b) => rows[b]),
    );
    cache.scatter(sub, long);
    long.forEach((b, i) => {
      out[b] = logits[i];
    });
  } finally {
    sub.dispose();
  }
  return out;
}

/** One forward pass over the whole cache, every row padded to the longest. */
function extendPass(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
): (Float64Array | null)[] {
  return noGrad(() =>
    tidy(() => {
      const { ids, lengths } = padBatch(rows, model.config.device);
      const { logits } = model.forward(ids, { cache, lengths });
      const V = logits.shape[2];
      const T = logits.shape[1];
      const all = logits.dataSync();
      return lengths.map((n, b) =>
        n === 0 ? null : Float64Array.from(all.subarray((b * T + n - 1) * V, (b * T + n) * V)),
      );
    }),
  );
}

function stopTokensOf(options: GenerateOptions, row: number): readonly number[] {
  const s = options.stopTokens ?? [];
  return Array.isArray(s[0]) ? ((s as readonly (readonly number[])[])[row] ?? []) : (s as readonly number[]);
}

export function generate(
  model: TransformerLM,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): GenerateResult {
  const B = prompts.length;
  const generator = options.generator ?? getDefaultGenerator();
  if (options.stopStrings?.length && !options.decode)
    throw new Error('generate: stopStrings need a decode function');
  const cache = options.cache ?? model.createCache(B);
  const tokens: number[][] = prompts.map(() => []);
  const logprobs: number[][] = prompts.map(() => []);
  const finishReasons: (FinishReason | null)[] = prompts.map(() => null);
  let last = extend(model, cache, prompts);
  for (let step = 0; step < options.maxNewTokens; step++) {
    const draws = rand([B], { generator, dtype: 'float64' });
    const u = draws.dataSync();
    draws.dispose();
    const next: number[][] = prompts.map(() => []);
    for (let b = 0; b < B; b++) {
      const logits = last[b];
      if (finishReasons[b] || !logits) continue;
      if (cache.lengths[b] >= cache.capacity) {
        finishReasons[b] = 'length';
        continue;
      }
      const { token, logprob } = sampleToken(logits, u[b], options);
      tokens[b].push(token);
      logprobs[b].push(logprob);
      if (stopTokensOf(options, b).includes(token)) finishReasons[b] = 'stop_token';
      else if (options.stopStrings?.some((s) => options.decode!(tokens[b]).includes(s)))
        finishReasons[b] = 'stop_string';
      else if (tokens[b].length >= options.maxNewTokens) finishReasons[b] = 'length';
      // Finished rows still get their last token written, so the cache holds the whole sequence.
      next[b].push(token);
    }
    last = extend(model, cache, next);
    if (finishReasons.every((r) => r !== null)) break;
  }
  return { tokens, logprobs, finishReasons: finishReasons.map((r) => r ?? 'length'), cache };
}
