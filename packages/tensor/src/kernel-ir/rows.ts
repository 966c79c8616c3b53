/**
 * The scalar arithmetic of the row kernels — softmax and log-softmax with their backward, logprobs with its
 * backward, layer and RMS norms with theirs, attention's backward — written once for the CPU, WebGPU and
 * CUDA. Each backend keeps its own row loop (a thread per row, a workgroup per row, a block per row with
 * warp sums) and calls these at the points where a row's values meet its statistics. The wasm kernels
 * keep a float32 SIMD form of their own (exp by a polynomial, sums over lanes), whose roundings differ.
 */
import {
  type ScalarFunction,
  add,
  div,
  eq,
  exp,
  log,
  mul,
  neg,
  scalarFunction,
  select,
  sqrt,
  sub,
} from './expr.js';

/** A row's log-sum-exp from its maximum and Σ exp(x − max): the maximum itself when that is −∞ (all −∞). */
export const LOG_SUM_EXP = scalarFunction('row_lse', 2, (_, max, sum) =>
  select(eq(max, Number.NEGATIVE_INFINITY), max, add(max, log(sum))),
);

/** Softmax at logit x of a row whose log-sum-exp is lse. */
export const SOFTMAX = scalarFunction('softmax_at', 2, (_, x, lse) => exp(sub(x, lse)));
/** Log-softmax at logit x of a row whose log-sum-exp is lse. */
export const LOG_SOFTMAX = scalarFunction('log_softmax_at', 2, (_, x, lse) => sub(x, lse));

/** Softmax's backward: dot = Σ g·y over the row, then dx = y·(g − dot), of (y, g) and (y, g, dot). */
export const SOFTMAX_DOT = scalarFunction('softmax_dot_term', 2, (_, y, g) => mul(g, y));
export const SOFTMAX_GRAD = scalarFunction('softmax_grad', 3, (_, y, g, dot) => mul(y, sub(g, dot)));
/** Log-softmax's backward: dot = Σ g, then dx = g − exp(y)·dot. */
export const LOG_SOFTMAX_DOT = scalarFunction('log_softmax_dot_term', 2, (_, _y, g) => g);
export const LOG_SOFTMAX_GRAD = scalarFunction('log_softmax_grad', 3, (_, y, g, dot) =>
  sub(g, mul(exp(y), dot)),
);

/** d logprob / d logit at a logit x that is not the target: −g·softmax(x), of (x, lse, g); the target adds g. */
export const LOGPROBS_GRAD = scalarFunction('logprobs_grad', 3, (_, x, lse, g) =>
  mul(neg(g), exp(sub(x, lse))),
);

/** A norm's 1/√(Σ(x − mean)²/D + ε), of (the sum of squares, D, ε). */
export const NORM_RSTD = scalarFunction('norm_rstd', 3, (_, sumSq, width, eps) =>
  div(1, sqrt(add(div(sumSq, width), eps))),
);
/** The normalised value (x − mean)·rstd, of (x, mean, rstd). */
export const NORM_XHAT = scalarFunction('norm_xhat', 3, (_, x, mean, rstd) => mul(sub(x, mean), rstd));
/**
 * A norm's dx = rstd·(gy − mean(gy) − xhat·mean(gy·xhat)), of (gy, xhat, rstd, mean(gy), mean(gy·xhat)),
 * gy = dy·weight; RMS norm passes 0 for mean(gy).
 */
export const NORM_GRAD = scalarFunction('norm_grad', 5, (_, gy, xhat, rstd, meanG, meanGX) =>
  mul(rstd, sub(sub(gy, meanG), mul(xhat, meanGX))),
);

/**
 * Attention's backward at one score: dS = P·(dP − delta)·scale, of (P, dP = dO·V, delta = dO·O, scale);
 * the tiled kernels keep their own loops and recompute P as they go.
 */
export const ATTENTION_DS = scalarFunction('attention_ds', 4, (_, p, dp, delta, scale) =>
  mul(mul(p, sub(dp, delta)), scale),
);

/** Softmax's or log-softmax's functions: the output at a logit, the backward's dot term and gradient. */
export function softmaxFunctions(log: boolean): {
  at: ScalarFunction;
  dot: ScalarFunction;
  grad: ScalarFunction;
} {
  return log
    ? { at: LOG_SOFTMAX, dot: LOG_SOFTMAX_DOT, grad: LOG_SOFTMAX_GRAD }
    : { at: SOFTMAX, dot: SOFTMAX_DOT, grad: SOFTMAX_GRAD };
}

/** Every row function, for a renderer that defines them all in one shader or module. */
export const ROW_FUNCTIONS = [
  LOG_SUM_EXP,
  SOFTMAX,
  LOG_SOFTMAX,
  SOFTMAX_DOT,
  SOFTMAX_GRAD,
  LOG_SOFTMAX_DOT,
  LOG_SOFTMAX_GRAD,
  LOGPROBS_GRAD,
  NORM_RSTD,
  NORM_XHAT,
  NORM_GRAD,
  ATTENTION_DS,
];
