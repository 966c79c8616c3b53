/**
 * A decoder-only language model: token embedding → N pre-norm blocks (rotary attention, grouped-query heads,
 * GELU or SwiGLU MLP) → final norm → LM head (optionally tied to the embedding), plus an optional value head
 * (a scalar per position) for PPO critics, and an optional copy head (layers/copy-head.ts) that mixes in
 * attention over the context's tokens.
 */
import {
  Generator,
  type Tensor,
  dropout,
  gather,
  getBackend,
  matmul,
  tensor,
  tidy,
  type FloatDType,
} from '@agent-r1/tensor';
import { KVCache } from '../generate/kv-cache.js';
import type { AttentionContext } from '../layers/attention.js';
import { DecoderBlock, makeNorm } from '../layers/block.js';
import { CopyHead } from '../layers/copy-head.js';
import { Embedding } from '../layers/embedding.js';
import { Linear } from '../layers/linear.js';
import type { LayerNorm, RMSNorm } from '../layers/norm.js';
import { type RopeScaling, RotaryTables } from '../layers/rope.js';
import { Module } from '../module.js';

export interface TransformerConfig {
  vocabSize: number;
  dModel: number;
  layers: number;
  heads: number;
  /** Key/value heads for grouped-query attention (default: heads). */
  kvHeads?: number;
  /** Hidden size of the MLP (default: 4·dModel for GELU, ≈ 8/3·dModel rounded to 8 for SwiGLU). */
  ffnHidden?: number;
  /** Longest sequence (positions of the rotary tables and the default cache capacity). */
  maxLength: number;
  tiedEmbeddings?: boolean;
  activation?: 'gelu' | 'swiglu';
  norm?: 'rms' | 'layer';
  ropeBase?: number;
  /** Stretches the rotary frequencies as a pretrained model's `rope_scaling` says (default null: none). */
  ropeScaling?: RopeScaling | null;
  /** Features per attention head (default dModel / heads); Qwen3 sets it apart from dModel / heads. */
  headDim?: number;
  /** Biases on the attention's query, key and value projections, as Qwen2 has (default false). */
  qkvBias?: boolean;
  /** RMS norms on each head's queries and keys before the rotation, as Qwen3 has (default false). */
  qkNorm?: boolean;
  /** The norms' epsilon (default 1e-6 for RMSNorm, 1e-5 for LayerNorm). */
  normEps?: number;
  /** Adds a value head on the final hidden states (a critic sharing the trunk). */
  valueHead?: boolean;
  /** Mixes a copy distribution over the context's tokens into the output (default false). */
  copyHead?: boolean;
  /**
   * The copy head also scores exact token matches (the one or two tokens before a context token equal the
   * last ones written; learned weights, see CopyHead). Needs copyHead (default false).
   */
  copyMatch?: boolean;
  /**
   * The copy head also scores how many tokens a match spans beyond two (a learned weight, see CopyHead), so
   * that a copy of a figure such as `1,285,216` does not loop on its repeated `,2`. Needs copyMatch
   * (default false).
   */
  copyMatchSpan?: boolean;
  /**
   * The match evidence's two weights depend on the query's hidden state (see CopyHead). Needs copyMatch
   * (default false).
   */
  copyMatchGate?: boolean;
  /**
   * The copy head's gate also reads the context tokens its attention points at (See et al.'s context
   * vector; see CopyHead). Needs copyHead (default false).
   */
  copySourceGate?: boolean;
  /** Seed of the initialisation. */
  seed?: number;
  dtype?: FloatDType;
  device?: string;
}

export type ResolvedConfig = Required<Omit<TransformerConfig, 'device'>> & { device?: string };

export function resolveConfig(c: TransformerConfig): ResolvedConfig {
  const activation = c.activation ?? 'swiglu';
  const defaultHidden = activation === 'gelu' ? 4 * c.dModel : Math.ceil((8 * c.dModel) / 3 / 8) * 8;
  for (const key of ['vocabSize', 'dModel', 'layers', 'heads', 'maxLength'] as const) {
    if (!Number.isInteger(c[key]) || c[key] <= 0)
      throw new Error(`TransformerConfig: ${key} must be a positive integer, got ${c[key]}`);
  }
  for (const key of ['copyMatch', 'copySourceGate'] as const) {
    if (c[key] && !c.copyHead) throw new Error(`TransformerConfig: ${key} needs copyHead`);
  }
  for (const key of ['copyMatchGate', 'copyMatchSpan'] as const) {
    if (c[key] && !c.copyMatch) throw new Error(`TransformerConfig: ${key} needs copyMatch`);
  }
  if (c.headDim !== undefined && (!Number.isInteger(c.headDim) || c.headDim <= 0 || c.headDim % 2 !== 0))
    throw new Error(`TransformerConfig: headDim must be a positive even integer, got ${c.headDim}`);
  if (c.normEps !== undefined && !(c.normEps > 0))
    throw new Error(`TransformerConfig: normEps must be a positive number, got ${c.normEps}`);
  checkRopeScaling(c.ropeScaling ?? null);
  const norm = c.norm ?? 'rms';
  return {
    vocabSize: c.vocabSize,
    dModel: c.dModel,
    layers: c.layers,
    heads: c.heads,
    kvHeads: c.kvHeads ?? c.heads,
    ffnHidden: c.ffnHidden ?? defaultHidden,
    maxLength: c.maxLength,
    tiedEmbeddings: c.tiedEmbeddings ?? true,
    activation,
    norm,
    ropeBase: c.ropeBase ?? 10000,
    ropeScaling: c.ropeScaling ?? null,
    headDim: c.headDim ?? c.dModel / c.heads,
    qkvBias: c.qkvBias ?? false,
    qkNorm: c.qkNorm ?? false,
    normEps: c.normEps ?? (norm === 'rms' ? 1e-6 : 1e-5),
    valueHead: c.valueHead ?? false,
    copyHead: c.copyHead ?? false,
    copyMatch: c.copyMatch ?? false,
    copyMatchSpan: c.copyMatchSpan ?? false,
    copyMatchGate: c.copyMatchGate ?? false,
    copySourceGate: c.copySourceGate ?? false,
    seed: c.seed ?? 0,
    dtype: c.dtype ?? 'float32',
    device: c.device,
  };
}

function checkRopeScaling(s: RopeScaling | null): void {
  if (s === null) return;
  const positive = (key: string, v: unknown) => {
    if (typeof v !== 'number' || !(v > 0))
      throw new Error(`TransformerConfig: ropeScaling.${key} must be a positive number, got ${v}`);
  };
  if (s.type === 'linear') {
    positive('factor', s.factor);
    return;
  }
  if (s.type !== 'llama3')
    throw new Error(
      `TransformerConfig: ropeScaling.type must be 'linear' or 'llama3', got ${JSON.stringify((s as { type: unknown }).type)}`,
    );
  for (const key of ['factor', 'lowFreqFactor', 'highFreqFactor', 'originalMaxLength'] as const)
    positive(key, s[key]);
  if (s.highFreqFactor <= s.lowFreqFactor)
    throw new Error(
      `TransformerConfig: ropeScaling.highFreqFactor (${s.highFreqFactor}) must exceed lowFreqFactor (${s.lowFreqFactor})`,
    );
}

export interface ForwardOptions {
  /** Valid tokens per row of a right-padded batch (default: every row is full). */
  lengths?: readonly number[];
  /** Read and extend this cache: row b's tokens go after its cached positions. */
  cache?: KVCache;
  /**
   * Only these positions of each row get logits (indices into the T given tokens; with a cache, the new
   * ones): logits are then [B, Q, vocab], Q the longest list, and a shorter list is padded by repeating its
   * last position (position 0 if empty). A loss over a few tokens (a policy's actions among documents it
   * read), or generation after a prompt or an observation (the last token's), then skips the output layers'
   * work, the largest part of a small model's, at every other position.
   */
  positions?: readonly (readonly number[])[];
  /**
   * The ids' rows on the host, for the copy head, which indexes by token on the host. Without them it reads
   * `ids` back, which a backend whose reads are promises (WebGPU) cannot do, and which costs a GPU backend a
   * wait for the device: callers that built `ids` from host rows should pass them.
   */
  tokens?: readonly ArrayLike<number>[];
  /**
   * Residual dropout for a training pass: the embeddings and each block's attention and MLP outputs lose
   * elements with probability `p` (the rest scaled by 1/(1 − p)), drawn from `generator`. Without it a pass
   * has no dropout, whatever the module's training flag: generation and scoring stay deterministic.
   */
  dropout?: { p: number; generator: Generator };
}

export interface ForwardResult {
  /** [B, T, vocab] (or [B, Q, vocab] at `positions`); with a copy head, the log-probabilities of the mixture. */
  logits: Tensor;
  /** [B, T] when the model has a value head, else null. */
  values: Tensor | null;
}

export class TransformerLM extends Module {
  readonly config: ResolvedConfig;
  readonly embed: Embedding;
  readonly blocks: DecoderBlock[];
  readonly finalNorm: LayerNorm | RMSNorm;
  readonly head: Linear | null;
  readonly valueHead: Linear | null;
  readonly copyHead: CopyHead | null;
  private rotary: RotaryTables;

  constructor(config: TransformerConfig) {
    super();
    const c = resolveConfig(config);
    this.config = c;
    const generator = new Generator(c.seed);
    const init = { dtype: c.dtype, device: c.device, generator };
    // GPT-2 initialisation: N(0, 0.02), residual projections scaled by 1/√(2·layers).
    const std = 0.02;
    const outStd = std / Math.sqrt(2 * c.layers);
    this.embed = this.module('embed', new Embedding(c.vocabSize, c.dModel, { ...init, std }));
    const block = {
      ...init,
      dim: c.dModel,
      heads: c.heads,
      kvHeads: c.kvHeads,
      std,
      outStd,
      ffnHidden: c.ffnHidden,
      activation: c.activation,
      norm: c.norm,
      headDim: c.headDim,
      qkvBias: c.qkvBias,
      qkNorm: c.qkNorm,
      normEps: c.normEps,
    };
    this.blocks = Array.from({ length: c.layers }, (_, i) =>
      this.module(`blocks.${i}`, new DecoderBlock(block)),
    );
    this.finalNorm = this.module('finalNorm', makeNorm(c.norm, c.dModel, block));
    this.head = c.tiedEmbeddings
      ? null
      : this.module('head', new Linear(c.dModel, c.vocabSize, { ...init, std, bias: false }));
    this.valueHead = c.valueHead
      ? this.module('valueHead', new Linear(c.dModel, 1, { ...init, std, bias: true }))
      : null;
    this.copyHead = c.copyHead
      ? this.module(
          'copyHead',
          new CopyHead(c.dModel, {
            ...init,
            std,
            match: c.copyMatch,
            matchSpan: c.copyMatchSpan,
            matchGate: c.copyMatchGate,
            sourceGate: c.copySourceGate,
          }),
        )
      : null;
    this.rotary = new RotaryTables(c.headDim, c.maxLength, c.ropeBase, {
      dtype: c.dtype,
      device: c.device,
      scaling: c.ropeScaling,
    });
  }

  get headDim(): number {
    return this.config.headDim;
  }

  /** A cache for `batch` sequences of up to `capacity` positions (default: maxLength). */
  createCache(batch: number, capacity = this.config.maxLength): KVCache {
    return new KVCache({
      layers: this.config.layers,
      batch,
      kvHeads: this.config.kvHeads,
      headDim: this.headDim,
      capacity,
      dtype: this.config.dtype,
      device: this.config.device,
      copyDim: this.copyHead ? this.config.dModel : undefined,
      copySources: this.config.copySourceGate,
    });
  }

  /**
   * ids: int32 [B, T]. Without a cache, attention is causal over the given tokens; positions at or after a
   * row's length are padding, and their outputs are unspecified (padding never changes a real token's).
   */
  forward(ids: Tensor, options: ForwardOptions = {}): ForwardResult {
    if (ids.rank !== 2 || ids.dtype !== 'int32') {
      throw new Error(
        `TransformerLM.forward: ids must be int32 [batch, time], got ${ids.dtype} [${ids.shape}]`,
      );
    }
    const [B, T] = ids.shape;
    const lengths = options.lengths ?? new Array<number>(B).fill(T);
    if (lengths.length !== B || lengths.some((n) => n < 0 || n > T)) {
      throw new Error(
        `TransformerLM.forward: lengths [${lengths}] must give 0..${T} tokens for each of ${B} rows`,
      );
    }
    const cache = options.cache;
    if (cache && cache.batch !== B)
      throw new Error(`TransformerLM.forward: cache holds ${cache.batch} rows, ids has ${B}`);
    const outputAt = options.positions ? paddedPositions(options.positions, B, T) : null;
    const starts = cache ? [...cache.lengths] : new Array<number>(B).fill(0);
    const keys = starts.reduce((most, s, b) => Math.max(most, s + lengths[b]), 1);
    if (keys > this.config.maxLength) {
      throw new Error(`TransformerLM.forward: ${keys} positions exceed maxLength ${this.config.maxLength}`);
    }
    cache?.checkRoom(lengths);
    const out = tidy(() => {
      const positions = tensor(
        Int32Array.from({ length: B * T }, (_, i) =>
          Math.min(starts[Math.floor(i / T)] + (i % T), this.config.maxLength - 1),
        ),
        { shape: [B, T], device: ids.device },
      );
      const { cos, sin } = this.rotary.at(positions);
      // Without a cache, rows are right-padded: causal attention alone keeps every real token from seeing
      // padding (its keys all come before it), so no mask is built, and fused kernels take their fast path.
      const mask = cache ? keepMask(starts, lengths, T, keys, ids.device) : null;
      const drop = dropoutOf(options.dropout);
      let h = this.embed.forward(ids);
      if (drop) h = drop(h);
      this.blocks.forEach((block, layer) => {
        const ctx: AttentionContext = {
          cos,
          sin,
          mask,
          cache: cache ? { kv: cache, layer, added: lengths, keys } : null,
          drop,
        };
        h = block.forward(h, ctx);
      });
      h = this.finalNorm.forward(h);
      const out = outputAt ? atPositions(h, outputAt) : h;
      let logits = this.head ? this.head.forward(out) : matmul(out, this.embed.weight.transpose(0, 1));
      if (this.copyHead)
        logits = this.copied(
          h,
          out,
          logits,
          ids,
          outputAt
            ? cache
              ? keepMask(starts, lengths, T, keys, ids.device, outputAt)
              : positionsKeep(outputAt, T, ids.device)
            : mask,
          outputAt,
          cache ? { kv: cache, lengths, keys } : null,
          options.tokens,
        );
      const values = this.valueHead ? this.valueHead.forward(h).squeeze(-1) : null;
      return { logits, values };
    });
    cache?.advance(lengths);
    return out;
  }

  /**
   * The copy head's mixture at the output positions (hidden states `out`, logits), over the given tokens
   * (causal, or `keep` [B, Q, T] at the chosen positions outputAt) or over the cache's tokens (after
   * writing h's; `keep` [B, 1, Q, S]).
   */
  private copied(
    h: Tensor,
    out: Tensor,
    logits: Tensor,
    ids: Tensor,
    keep: Tensor | null,
    outputAt: number[][] | null,
    cache: { kv: KVCache; lengths: readonly number[]; keys: number } | null,
    tokens: readonly ArrayLike<number>[] | undefined,
  ): Tensor {
    const head = this.copyHead!;
    const T = ids.shape[1];
    const rows = tokens ? checkedTokenRows(tokens, ids.shape) : readTokenRows(ids);
    if (!cache)
      return head.forward(out, logits, { ...head.contextOf(h, rows), keep, queryAt: outputAt ?? undefined });
    const starts = [...cache.kv.lengths];
    cache.kv.writeCopy(head.nextKeys(h), rows, cache.lengths, head.sourcesOf(h));
    // Query t of row b (each new token, or those at outputAt) is the token at starts[b] + t; padding queries
    // (past the row's tokens) are clamped.
    const queryAt = starts.map((start, b) =>
      (outputAt?.[b] ?? Array.from({ length: T }, (_, t) => t)).map((t) =>
        Math.min(start + t, start + Math.max(cache.lengths[b], 1) - 1),
      ),
    );
    return head.forward(out, logits, {
      keys: cache.kv.copyKeys!.narrow(1, 0, cache.keys),
      ids: cache.kv.tokenIds!,
      keep: keep!.squeeze(1),
      queryAt,
      sources: cache.kv.copySources?.narrow(1, 0, cache.keys),
    });
  }

  /** Moves the parameters and the rotary tables to `device`, which later caches and inputs should use too. */
  override to(device: string): this {
    const c = this.config;
    if (this.rotary.cos.device === device) return super.to(device);
    const rotary = new RotaryTables(this.headDim, c.maxLength, c.ropeBase, {
      dtype: c.dtype,
      device,
      scaling: c.ropeScaling,
    });
    try {
      super.to(device);
    } catch (err) {
      rotary.dispose();
      throw err;
    }
    this.rotary.dispose();
    this.rotary = rotary;
    c.device = device;
    return this;
  }

  override dispose(): void {
    super.dispose();
    this.rotary.dispose();
  }
}

/** The host copy of ids [B, T] a caller gave: B rows of at least T tokens (only the first T are used). */
function checkedTokenRows(
  tokens: readonly ArrayLike<number>[],
  [B, T]: readonly number[],
): readonly ArrayLike<number>[] {
  if (tokens.length !== B || tokens.some((row) => row.length < T))
    throw new Error(
      `TransformerLM.forward: tokens must hold the ${B} rows of ids with at least ${T} tokens each, got ${tokens.length} rows of [${tokens.map((r) => r.length)}]`,
    );
  return tokens;
}

function readTokenRows(ids: Tensor): ArrayLike<number>[] {
  const [B, T] = ids.shape;
  if (!getBackend(ids.device).readSync)
    throw new Error(
      `TransformerLM.forward: the copy head needs the token ids on the host, and the ${ids.device} backend cannot read them synchronously: pass options.tokens`,
    );
  const data = ids.dataSync();
  return Array.from({ length: B }, (_, b) => data.subarray(b * T, (b + 1) * T));
}

/** Each row's positions, checked against T and padded to the longest list ([B][Q], Q >= 1). */
function paddedPositions(positions: readonly (readonly number[])[], B: number, T: number): number[][] {
  if (positions.length !== B)
    throw new Error(`TransformerLM.forward: positions has ${positions.length} rows, ids has ${B}`);
  if (T === 0)
    throw new Error('TransformerLM.forward: positions need at least one token per row, ids has none');
  const Q = positions.reduce((most, p) => Math.max(most, p.length), 1);
  return positions.map((row, b) => {
    for (const p of row) {
      if (!Number.isInteger(p) || p < 0 || p >= T)
        throw new Error(`TransformerLM.forward: position ${p} of row ${b} is not one of 0..${T - 1}`);
    }
    const last = row.at(-1) ?? 0;
    return Array.from({ length: Q }, (_, q) => row[q] ?? last);
  });
}

/** h [B, T, D] at each row's positions: [B, Q, D]. */
function atPositions(h: Tensor, positions: number[][]): Tensor {
  const [B, , D] = h.shape;
  const Q = positions[0].length;
  const index = tensor(Int32Array.from(positions.flat()), { shape: [B, Q, 1], device: h.device })
    .expand([B, Q, D])
    .contiguous();
  return gather(h, 1, index);
}

/** Bool [B, Q, T]: the query at position p sees keys 0..p (causal attention at chosen positions). */
function positionsKeep(positions: number[][], T: number, device: string): Tensor {
  const B = positions.length;
  const Q = positions[0].length;
  const data = new Uint8Array(B * Q * T);
  for (const [b, row] of positions.entries())
    for (const [q, p] of row.entries()) data.fill(1, (b * Q + q) * T, (b * Q + q) * T + p + 1);
  return tensor(data, { shape: [B, Q, T], dtype: 'bool', device });
}

/**
 * Bool [B, 1, Q, S]: query t of row b (at position start_b + t) sees key j when j <= start_b + t and j is
 * one of the row's written positions; padding queries see the row's last written key. The queries are the
 * T new tokens, or the new tokens at `at` (row b: Q offsets).
 */
function keepMask(
  starts: number[],
  lengths: readonly number[],
  T: number,
  S: number,
  device: string,
  at: readonly (readonly number[])[] | null = null,
): Tensor {
  const B = starts.length;
  const Q = at ? at[0].length : T;
  const data = new Uint8Array(B * Q * S);
  for (let b = 0; b < B; b++) {
    const end = starts[b] + lengths[b];
    for (let q = 0; q < Q; q++) {
      const last = Math.min(starts[b] + (at ? at[b][q] : q), end - 1);
      data.fill(1, (b * Q + q) * S, (b * Q + q) * S + last + 1);
    }
  }
  return tensor(data, { shape: [B, 1, Q, S], dtype: 'bool', device });
}

/** The residual dropout of a forward pass's options, or undefined for none. */
function dropoutOf(options: ForwardOptions['dropout']): ((x: Tensor) => Tensor) | undefined {
  if (!options || options.p === 0) return undefined;
  if (!(options.p > 0 && options.p < 1))
    throw new Error(`TransformerLM.forward: dropout.p must be in [0, 1), got ${options.p}`);
  return (x) => dropout(x, options.p, { generator: options.generator });
}
