/**
 * AdamW's arithmetic (Loshchilov & Hutter: decoupled weight decay, bias-corrected moments), element by
 * element, once for the CPU, WebGPU and CUDA: the new first and second moments from the old ones and the
 * gradient, then the new parameter. The backends pass the step's scalars: decay = 1 − lr·λ, and the bias
 * corrections c1 = 1 − β1ᵗ, c2 = 1 − β2ᵗ. The wasm kernel keeps a float32 form of its own, with 1 − β and
 * lr / c1 folded in float64 before they are rounded (emit/elementwise.ts), whose roundings differ.
 */
import { add, div, mul, scalarFunction, sqrt, sub } from './expr.js';

/** m' = β1·m + (1 − β1)·g, of (m, g, β1). */
export const ADAMW_M = scalarFunction('adamw_m', 3, (_, m, g, b1) => add(mul(b1, m), mul(sub(1, b1), g)));

/** v' = β2·v + (1 − β2)·g·g, of (v, g, β2). */
export const ADAMW_V = scalarFunction('adamw_v', 3, (_, v, g, b2) =>
  add(mul(b2, v), mul(mul(sub(1, b2), g), g)),
);

/** p' = p·decay − lr·(m'/c1) / (√(v'/c2) + ε), of (p, m', v', decay, lr, c1, c2, ε). */
export const ADAMW_P = scalarFunction('adamw_p', 8, (_, p, m, v, decay, lr, c1, c2, eps) =>
  sub(mul(p, decay), div(mul(lr, div(m, c1)), add(sqrt(div(v, c2)), eps))),
);
