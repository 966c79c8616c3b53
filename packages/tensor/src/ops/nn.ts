/**
 * Fused neural-network ops. Each is one primitive forward and one primitive backward (not the composed
 * gradient), because these are where a training step spends its time.
 */
import { statsDtype } from '../dtype.js';
import { isGradEnabled, record } from '../autograd.js';
import { headsDense } from '../backend/backend.js';
import { formatShape, normalizeAxis } from '../shape.js';
import type { Tensor } from '../tensor.js';
import { type RandomOptions, rand } from './creation.js';
import { where } from './elementwise.js';
import { broadcastView, checkDtype, checkFloat, checkSameDevice, empty } from './internal.js';

/** Runs a last-axis op on `axis` by moving that axis last and back (views; the transposes carry the gradient). */
function onAxis(x: Tensor, axis: number, op: (t: Tensor) => Tensor): Tensor {
  const a = normalizeAxis('softmax', axis, Math.max(x.rank, 1));
  if (x.rank === 0 || a === x.rank - 1) return op(x);
  const moved = x.transpose(a, -1);
  const y = op(moved);
  const out = y.transpose(a, -1);
  moved.dispose();
  y.dispose();
  return out;
}

function softmaxLast(x: Tensor, log: boolean): Tensor {
  checkFloat(log ? 'logSoftmax' : 'softmax', x);
  const input = x.contiguous();
  const out = empty(x.backend, x.shape, x.dtype);
  x.backend.kernels.softmax(input, out, log);
  input.dispose();
  return record(
    log ? 'logSoftmax' : 'softmax',
    out,
    [x],
    (g, [y]) => {
      const dy = g.contiguous();
      const dx = empty(g.backend, y.shape, y.dtype);
      g.backend.kernels.softmaxBackward(y, dy, dx, log);
      dy.dispose();
      return [dx];
    },
    [out],
  );
}

export const softmax = (x: Tensor, axis = -1) => onAxis(x, axis, (t) => softmaxLast(t, false));
export const logSoftmax = (x: Tensor, axis = -1) => onAxis(x, axis, (t) => softmaxLast(t, true));

/** log(sum(exp(x))) along an axis, stable for large values. */
export function logsumexp(x: Tensor, axis = -1, keepdim = false): Tensor {
  // An infinite maximum is shifted by 0 instead: a row of -inf then gives log(0) = -inf, not -inf - -inf.
  const max = x.max(axis, true).detach();
  const size = max.abs();
  const finite = size.lt(Number.POSITIVE_INFINITY);
  const m = where(finite, max, 0);
  for (const t of [max, size, finite]) t.dispose();
  const shifted = x.sub(m);
  const e = shifted.exp();
  const s = e.sum(axis, true);
  const l = s.log();
  const withMax = l.add(m);
  const out = keepdim ? withMax : withMax.squeeze(normalizeAxis('logsumexp', axis, x.rank));
  for (const t of [m, shifted, e, s, l]) t.dispose();
  if (out !== withMax) withMax.dispose();
  return out;
}

/**
 * log_softmax(logits)[..., target]: the log-probability of each target token, without materialising the
 * log-softmax. logits [..., V] float, targets [...] int32 → [...].
 */
export function logprobs(logits: Tensor, targets: Tensor): Tensor {
  checkFloat('logprobs', logits);
  checkDtype('logprobs', 'targets', targets, 'int32');
  checkSameDevice('logprobs', [logits, targets]);
  const lead = logits.shape.slice(0, -1);
  if (logits.rank === 0 || targets.rank !== lead.length || targets.shape.some((d, i) => d !== lead[i])) {
    throw new Error(
      `logprobs: targets shape ${formatShape(targets.shape)} must equal logits shape ${formatShape(logits.shape)} without its last axis`,
    );
  }
  const flat = logits.contiguous();
  const t = targets.contiguous();
  const out = empty(logits.backend, lead, logits.dtype);
  const lse = empty(logits.backend, lead, statsDtype(logits.dtype));
  logits.backend.kernels.logprobs(flat, t, out, lse);
  const result = record(
    'logprobs',
    out,
    [logits],
    (g, [sl, st, slse]) => {
      const grad = g.contiguous();
      const dlogits = empty(g.backend, sl.shape, sl.dtype);
      g.backend.kernels.logprobsBackward(sl, st, slse, grad, dlogits);
      grad.dispose();
      return [dlogits];
    },
    [flat, t, lse],
  );
  for (const x of [flat, t, lse]) x.dispose();
  return result;
}

export interface CrossEntropyOptions {
  /** Targets equal to this are left out of the loss and of the mean's count. */
  ignoreIndex?: number;
  reduction?: 'mean' | 'sum' | 'none';
}

/** Cross-entropy of logits [..., C] against int32 class targets [...], built on the fused logprobs. */
export function crossEntropy(logits: Tensor, targets: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const ignore = options.ignoreIndex ?? -100;
  const valid = targets.ne(ignore);
  const safe = where(valid, targets, 0);
  const lp = logprobs(logits, safe);
  const mask = valid.cast(lp.dtype);
  const losses = lp.mul(mask).neg();
  const reduction = options.reduction ?? 'mean';
  let out: Tensor;
  if (reduction === 'none') out = losses;
  else {
    const total = losses.sum();
    if (reduction === 'sum') out = total;
    else {
      const count = mask.sum().maximum(1);
      out = total.div(count);
      total.dispose();
      count.dispose();
    }
    losses.dispose();
  }
  for (const t of [valid, safe, lp, mask]) t.dispose();
  return out;
}

function normOp(
  name: 'layerNorm' | 'rmsNorm',
  x: Tensor,
  weight: Tensor | null,
  bias: Tensor | null,
  eps: number,
): Tensor {
  checkFloat(name, x);
  const D = x.shape[x.rank - 1];
  for (const [what, p] of [
    ['weight', weight],
    ['bias', bias],
  ] as const) {
    if (p && (p.rank !== 1 || p.shape[0] !== D || p.dtype !== x.dtype)) {
      throw new Error(
        `${name}: ${what} must be [${D}] ${x.dtype} to match input ${formatShape(x.shape)}, got ${formatShape(p.shape)} ${p.dtype}`,
      );
    }
  }
  const params = [weight, bias].filter((p): p is Tensor => p !== null);
  checkSameDevice(name, [x, ...params]);
  const k = x.backend.kernels;
  const input = x.contiguous();
  const w = weight?.contiguous() ?? null;
  const rows = x.shape.slice(0, -1);
  const out = empty(x.backend, x.shape, x.dtype);
  const mean = empty(x.backend, rows, statsDtype(x.dtype));
  const rstd = empty(x.backend, rows, statsDtype(x.dtype));
  const b = bias?.contiguous() ?? null;
  (name === 'layerNorm' ? k.layerNorm : k.rmsNorm)({ x: input, weight: w, bias: b, eps, out, mean, rstd });
  b?.dispose();
  const saved = [input, mean, rstd, ...(w ? [w] : [])];
  const result = record(
    name,
    out,
    [x, ...params],
    (g, [sx, smean, srstd, sw], needs) => {
      const dy = g.contiguous();
      const dx = empty(g.backend, sx.shape, sx.dtype);
      const dweight = weight && needs[1] ? empty(g.backend, [D], sx.dtype) : null;
      const dbias = bias && needs[params.length] ? empty(g.backend, [D], sx.dtype) : null;
      const args = { x: sx, weight: sw ?? null, mean: smean, rstd: srstd, dy, dx, dweight, dbias };
      (name === 'layerNorm' ? g.backend.kernels.layerNormBackward : g.backend.kernels.rmsNormBackward)(args);
      dy.dispose();
      return [dx, ...(weight ? [dweight] : []), ...(bias ? [dbias] : [])];
    },
    saved,
  );
  for (const t of saved) t.dispose();
  return result;
}

/** Layer normalisation over the last axis, with optional affine weight and bias. */
export function layerNorm(
  x: Tensor,
  weight: Tensor | null = null,
  bias: Tensor | null = null,
  eps = 1e-5,
): Tensor {
  return normOp('layerNorm', x, weight, bias, eps);
}

/** RMS normalisation over the last axis (no centring), with optional weight. */
export function rmsNorm(x: Tensor, weight: Tensor | null = null, eps = 1e-6): Tensor {
  return normOp('rmsNorm', x, weight, null, eps);
}

export interface AttentionOptions {
  /** Causal mask aligned bottom-right: query i sees keys j <= i + (S - T). */
  causal?: boolean;
  /** Boolean keep-mask broadcastable to [B, H, T, S] (true = may attend). */
  mask?: Tensor | null;
  /** Defaults to 1 / sqrt(D). */
  scale?: number;
}

/**
 * Scaled dot-product attention: q [B, H, T, D], k and v [B, Hkv, S, D] with H a multiple of Hkv
 * (grouped-query attention) → [B, H, T, D]. The T×S score matrix is never an autograd tensor.
 */
export function scaledDotProductAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  options: AttentionOptions = {},
): Tensor {
  for (const t of [q, k, v]) checkFloat('attention', t);
  checkSameDevice('attention', [q, k, v, ...(options.mask ? [options.mask] : [])]);
  const [B, H, T, D] = q.shape;
  const ok =
    q.rank === 4 &&
    k.rank === 4 &&
    v.rank === 4 &&
    k.shape[0] === B &&
    k.shape[3] === D &&
    H % k.shape[1] === 0 &&
    v.shape.every((d, i) => d === k.shape[i]) &&
    k.dtype === q.dtype &&
    v.dtype === q.dtype;
  if (!ok) {
    throw new Error(
      `attention: expected q [B, H, T, D] and k, v [B, Hkv, S, D] of one dtype with H a multiple of Hkv; got q ${formatShape(q.shape)}, k ${formatShape(k.shape)}, v ${formatShape(v.shape)}`,
    );
  }
  const S = k.shape[2];
  let maskView = null;
  if (options.mask) {
    if (options.mask.dtype !== 'bool')
      throw new Error(`attention: mask must be bool (true = attend), got ${options.mask.dtype}`);
    maskView = broadcastView(options.mask, [B, H, T, S]);
  }
  // With no gradient to take, K and V whose heads are dense rows are read where they are: a KV cache's
  // view of its first S positions is not copied at every decode step.
  const inPlace = !isGradEnabled() || ![q, k, v].some((t) => t.requiresGrad);
  const kv = (t: Tensor) => (inPlace && headsDense(t) ? t : t.contiguous());
  const [qc, kc, vc] = [q.contiguous(), kv(k), kv(v)];
  const out = empty(q.backend, q.shape, q.dtype);
  const lse = empty(q.backend, [B, H, T], statsDtype(q.dtype));
  const causal = options.causal ?? false;
  const scale = options.scale ?? 1 / Math.sqrt(D);
  q.backend.kernels.attention({ q: qc, k: kc, v: vc, mask: maskView, causal, scale, out, lse });
  const mask = options.mask ?? null;
  const saved = [qc, kc, vc, out, lse, ...(mask ? [mask] : [])];
  const result = record(
    'attention',
    out,
    [q, k, v],
    (g, [sq, sk, sv, so, slse, smask]) => {
      const dout = g.contiguous();
      const [dq, dk, dv] = [sq, sk, sv].map((t) => empty(g.backend, t.shape, t.dtype));
      g.backend.kernels.attentionBackward({
        q: sq,
        k: sk,
        v: sv,
        mask: smask ? broadcastView(smask, [B, H, T, S]) : null,
        causal,
        scale,
        out: so,
        lse: slse,
        dout,
        dq,
        dk,
        dv,
      });
      dout.dispose();
      return [dq, dk, dv];
    },
    saved,
  );
  for (const t of [qc, kc, vc, lse]) if (t !== k && t !== v) t.dispose();
  return result;
}

/**
 * Rotary position embedding of x [B, H, T, D] (D even) by the angles of each (batch, position) row:
 * `cos` and `sin` broadcast to [B, 1, T, D], each row holding the cosines (twice) and the sines with the
 * first half negated, so that out = x·cos + [x2, x1]·sin (x1, x2 the row's halves) — the rotation of each
 * pair (x1, x2) into (x1·cos − x2·sin, x2·cos + x1·sin). One kernel where a multiply, a multiply, an add
 * and the halves' swap would take five, with the same products and sums (each product rounded to the
 * dtype, then the sum), so the same bits. The gradient reaches x only: the angles are constants.
 */
export function rotaryEmbedding(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  checkFloat('rotaryEmbedding', x);
  checkSameDevice('rotaryEmbedding', [x, cos, sin]);
  const [B, , T, D] = x.shape;
  const fits = (t: Tensor) =>
    t.rank <= 4 &&
    t.dtype === x.dtype &&
    t.shape.every((d, i) => {
      const want = [B, 1, T, D][i + 4 - t.rank];
      return d === want || (d === 1 && i + 4 - t.rank !== 3);
    });
  if (x.rank !== 4 || D % 2 !== 0 || !fits(cos) || !fits(sin)) {
    throw new Error(
      `rotaryEmbedding: expected x [B, H, T, D] with D even, and cos, sin of its dtype broadcasting to [B, 1, T, D]; got x ${formatShape(x.shape)} ${x.dtype}, cos ${formatShape(cos.shape)} ${cos.dtype}, sin ${formatShape(sin.shape)} ${sin.dtype}`,
    );
  }
  if (cos.requiresGrad || sin.requiresGrad)
    throw new Error('rotaryEmbedding: cos and sin are constants here; they cannot require gradients');
  // The angle tables as dense [B, T, D] (no copy when they already are, as RotaryTables.at gives them).
  const table = (t: Tensor) => {
    const wide = t.expand([B, 1, T, D]);
    const dense = wide.reshape([B, T, D]);
    wide.dispose();
    return dense;
  };
  const [c, s] = [table(cos), table(sin)];
  const xc = x.contiguous();
  const out = empty(x.backend, x.shape, x.dtype);
  x.backend.kernels.rotary({ x: xc, cos: c, sin: s, out, transpose: false });
  const result = record(
    'rotaryEmbedding',
    out,
    [x],
    (g, [sc, ss]) => {
      const dy = g.contiguous();
      const dx = empty(g.backend, g.shape, g.dtype);
      g.backend.kernels.rotary({ x: dy, cos: sc, sin: ss, out: dx, transpose: true });
      dy.dispose();
      return [dx];
    },
    [c, s],
  );
  for (const t of [xc, c, s]) t.dispose();
  return result;
}

export interface DropoutOptions extends RandomOptions {
  training?: boolean;
}

/** Zeroes each element with probability p and scales the rest by 1/(1-p); identity when not training. */
export function dropout(x: Tensor, p: number, options: DropoutOptions = {}): Tensor {
  if (p < 0 || p >= 1) throw new Error(`dropout: p must be in [0, 1), got ${p}`);
  if (options.training === false || p === 0) return x.mul(1);
  const u = rand(x.shape, { ...options, device: x.device, dtype: x.dtype });
  const keepMask = u.ge(p);
  const scaled = x.mul(1 / (1 - p));
  const out = where(keepMask, scaled, 0);
  for (const t of [u, keepMask, scaled]) t.dispose();
  return out;
}
