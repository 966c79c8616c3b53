/**
 * Batched autoregressive generation over a KV cache: one prefill (`extend` with each prompt), then one token
 * per step for every unfinished row. Rows finish independently on a stop token, a stop string or the token
 * limit. The cache is returned so that a caller can append a tool observation (`extend`) and generate on.
 */
import {
  type Generator as RandomGenerator,
  type Tensor,
  type TypedArray,
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
  generator?: RandomGenerator;
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

/** Right-pads rows into an int32 [B, T] batch, with its rows on the host (for the copy head). */
function padBatch(
  rows: readonly (readonly number[])[],
  device: string | undefined,
): { ids: Tensor; tokens: Int32Array[]; lengths: number[] } {
  // A loop, not `Math.max(...lengths)`: spreading a big batch (100k rows) overflows the call stack.
  const T = rows.reduce((most, r) => Math.max(most, r.length), 1);
  const data = new Int32Array(rows.length * T);
  for (const [b, r] of rows.entries()) data.set(r, b * T);
  return {
    ids: tensor(data, { shape: [rows.length, T], device }),
    tokens: rows.map((_, b) => data.subarray(b * T, (b + 1) * T)),
    lengths: rows.map((r) => r.length),
  };
}

/** Logits per row: a row's next-token logits, or null for a row that added no token. */
export type RowLogits = (Float64Array | null)[];

/** The logits of one forward pass at the last new position of each row that added tokens, still on the device. */
interface PassLogits {
  /** [rows.length, V] */
  logits: Tensor;
  /** The caller's row index of each logits row. */
  rows: number[];
}

/**
 * Appends tokens to each row of the cache (a prompt, an observation, or one sampled token; rows may add
 * none) and returns the logits at each row's last new position as plain arrays (null for rows that added none).
 * It reads them synchronously (CPU, CUDA); `extendAsync` works on every backend.
 *
 * A batch pass pads every row to the longest one, so when a few rows append many tokens (an observation)
 * while the rest add one (decoding), those few go through their own pass over a cache of just their rows:
 * otherwise every row of the batch would compute a whole observation's length of padding.
 */
export function extend(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
): RowLogits {
  const passes = extendOnDevice(model, cache, rows);
  return toRows(passes, rows.length, (t) => t.dataSync());
}

/** `extend` with the logits read as a promise, so that it runs on WebGPU too; the same numbers elsewhere. */
export async function extendAsync(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
): Promise<RowLogits> {
  const passes = extendOnDevice(model, cache, rows);
  let read: TypedArray[];
  try {
    read = await Promise.all(passes.map((p) => p.logits.data()));
  } catch (err) {
    for (const p of passes) p.logits.dispose();
    throw err;
  }
  return toRows(passes, rows.length, (_, i) => read[i]);
}

/** Reads each pass's logits (then frees them) into one plain array per caller row. */
function toRows(
  passes: PassLogits[],
  batch: number,
  read: (logits: Tensor, pass: number) => TypedArray,
): RowLogits {
  const out: RowLogits = new Array(batch).fill(null);
  try {
    passes.forEach((pass, i) => {
      const data = read(pass.logits, i);
      const V = pass.logits.shape[1];
      pass.rows.forEach((b, r) => {
        out[b] = Float64Array.from(data.subarray(r * V, (r + 1) * V));
      });
    });
  } finally {
    for (const p of passes) p.logits.dispose();
  }
  return out;
}

/** The forward passes of `extend`: one over the whole cache, or the long rows' apart from the others'. */
function extendOnDevice(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
): PassLogits[] {
  if (rows.length !== cache.batch)
    throw new Error(`extend: got ${rows.length} rows for a cache of ${cache.batch}`);
  const all = rows.map((_, b) => b);
  const long = rows.flatMap((r, b) => (r.length > 1 ? [b] : []));
  if (long.length === 0 || long.length === rows.length) return present([extendPass(model, cache, rows, all)]);
  const passes: (PassLogits | null)[] = [];
  try {
    const short = rows.map((r) => (r.length > 1 ? [] : r));
    if (short.some((r) => r.length === 1)) passes.push(extendPass(model, cache, short, all));
    const sub = cache.gather(long);
    try {
      passes.push(
        extendPass(
          model,
          sub,
          long.map((b) => rows[b]),
          long,
        ),
      );
      cache.scatter(sub, long);
    } finally {
      sub.dispose();
    }
  } catch (err) {
    for (const p of passes) p?.logits.dispose();
    throw err;
  }
  return present(passes);
}

const present = (passes: (PassLogits | null)[]): PassLogits[] =>
  passes.filter((p): p is PassLogits => p !== null);

/**
 * One forward pass over the whole cache, every row padded to the longest, and the logits at each row's last
 * new position gathered on the device (null when no row adds a token). `names` renames the rows for the caller.
 */
function extendPass(
  model: TransformerLM,
  cache: KVCache,
  rows: readonly (readonly number[])[],
  names: readonly number[],
): PassLogits | null {
  return noGrad(() =>
    tidy(() => {
      const { ids, tokens, lengths } = padBatch(rows, model.config.device);
      const [B, T] = ids.shape;
      // Only each row's last new token is read: the output layers skip the rest of a prompt or observation.
      const positions = T > 1 ? lengths.map((n) => [Math.max(n, 1) - 1]) : undefined;
      const { logits } = model.forward(ids, { cache, lengths, tokens, positions });
      const V = logits.shape[2];
      const adding = lengths.flatMap((n, b) => (n > 0 ? [b] : []));
      if (adding.length === 0) return null;
      const rowNames = adding.map((b) => names[b]);
      const last = logits.reshape([B, V]);
      if (adding.length === B) return { logits: last, rows: rowNames };
      const index = tensor(Int32Array.from(adding), { shape: [adding.length], device: logits.device });
      return { logits: last.indexSelect(0, index), rows: rowNames };
    }),
  );
}

function stopTokensOf(options: GenerateOptions, row: number): readonly number[] {
  const s = options.stopTokens ?? [];
  return Array.isArray(s[0]) ? ((s as readonly (readonly number[])[])[row] ?? []) : (s as readonly number[]);
}

/** Tokens to append to the cache's rows; the driver answers with the logits `extend` gives. */
interface ExtendRequest {
  cache: KVCache;
  rows: readonly (readonly number[])[];
}

/**
 * The generation loop, which asks its driver for each forward pass (yield), so that `generate` (reading
 * logits synchronously) and `generateAsync` (reading them as promises) run the same steps.
 */
function* generation(
  model: TransformerLM,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Generator<ExtendRequest, GenerateResult, RowLogits> {
  const B = prompts.length;
  const generator = options.generator ?? getDefaultGenerator();
  if (options.stopStrings?.length && !options.decode)
    throw new Error('generate: stopStrings need a decode function');
  const cache = options.cache ?? model.createCache(B);
  const tokens: number[][] = prompts.map(() => []);
  const logprobs: number[][] = prompts.map(() => []);
  const finishReasons: (FinishReason | null)[] = prompts.map(() => null);
  let last = yield { cache, rows: prompts };
  for (let step = 0; step < options.maxNewTokens; step++) {
    // The draws are made on the CPU (the default device), whatever the model's.
    const draws = rand([B], { generator, dtype: 'float64', device: 'cpu' });
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
      // A NaN logit makes the draw meaningless; its log-prob would reach a caller's loss as NaN.
      if (!Number.isFinite(logprob))
        throw new Error(
          `generate: the model's logits for prompt ${b} after ${tokens[b].length} new tokens are not finite; the sampled token's log-prob is ${logprob}`,
        );
      tokens[b].push(token);
      logprobs[b].push(logprob);
      if (stopTokensOf(options, b).includes(token)) finishReasons[b] = 'stop_token';
      else if (options.stopStrings?.some((s) => options.decode!(tokens[b]).includes(s)))
        finishReasons[b] = 'stop_string';
      else if (tokens[b].length >= options.maxNewTokens) finishReasons[b] = 'length';
      // Finished rows still get their last token written, so the cache holds the whole sequence.
      next[b].push(token);
    }
    last = yield { cache, rows: next };
    if (finishReasons.every((r) => r !== null)) break;
  }
  return { tokens, logprobs, finishReasons: finishReasons.map((r) => r ?? 'length'), cache };
}

/** Generates up to maxNewTokens per prompt, reading logits synchronously (CPU, CUDA). */
export function generate(
  model: TransformerLM,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): GenerateResult {
  const steps = generation(model, prompts, options);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    step = steps.next(extend(model, step.value.cache, step.value.rows));
  }
}

/** `generate` on every backend (WebGPU included): the same tokens, with the logits read as promises. */
export async function generateAsync(
  model: TransformerLM,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GenerateResult> {
  const steps = generation(model, prompts, options);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    step = steps.next(await extendAsync(model, step.value.cache, step.value.rows));
  }
}
