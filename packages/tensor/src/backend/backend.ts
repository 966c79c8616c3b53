/**
 * The contract between ops and devices. A backend owns opaque storage (alloc, free, write, read) and
 * implements a small table of primitive kernels, found by name. Backends know nothing of autograd and
 * nothing of each other; every op and gradient is written once above this interface (see ../ops).
 *
 * Conventions every kernel may rely on:
 * - Inputs are `View`s: storage + shape + strides (in elements) + offset. Broadcast inputs arrive already
 *   expanded to the output shape (stride 0 on broadcast axes).
 * - Unless a kernel says otherwise, outputs are freshly allocated contiguous views (offset 0).
 * - Fused kernels (softmax and after) receive contiguous inputs; the op layer calls `contiguous()` first.
 */
import type { DType, TypedArray } from '../dtype.js';

/** Backend-owned memory. Each backend extends it with its own handle (typed array, GPUBuffer, CUdeviceptr). */
export interface Storage {
  readonly backend: string;
  readonly dtype: DType;
  /** Number of elements. */
  readonly size: number;
}

export interface View {
  readonly storage: Storage;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

export const UNARY_OPS = [
  'neg',
  'abs',
  'sign',
  'exp',
  'log',
  'sqrt',
  'rsqrt',
  'tanh',
  'sigmoid',
  'relu',
  'step',
  'gelu',
  'gelu_grad',
  'silu',
  'silu_grad',
  'sin',
  'cos',
  'reciprocal',
  'square',
  'logical_not',
  'softplus',
] as const;
export type UnaryOp = (typeof UNARY_OPS)[number];

export const BINARY_OPS = [
  'add',
  'sub',
  'mul',
  'div',
  'pow',
  'maximum',
  'minimum',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
] as const;
export type BinaryOp = (typeof BINARY_OPS)[number];
export type CompareOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

export const REDUCE_OPS = ['sum', 'prod', 'max', 'min', 'argmax', 'argmin'] as const;
export type ReduceOp = (typeof REDUCE_OPS)[number];

export type RandomDistribution = 'uniform' | 'normal' | 'randint';

export interface RandomArgs {
  distribution: RandomDistribution;
  /** Threefry key words derived from the seed. */
  key: readonly [number, number];
  /** Counter of the first element; element i uses counter + i. */
  counter: number;
  /** uniform: [a, b); normal: mean a, std b; randint: [a, b). */
  a: number;
  b: number;
}

export interface LayerNormArgs {
  x: View; // [N, D]
  weight: View | null; // [D]
  bias: View | null; // [D]
  eps: number;
  out: View; // [N, D]
  /** Saved for the backward pass in `statsDtype(x.dtype)` (float32 for half inputs), as is rstd. */
  mean: View; // [N] (unused and zero for rms_norm)
  rstd: View; // [N]
}

export interface LayerNormBackwardArgs {
  x: View;
  weight: View | null;
  mean: View;
  rstd: View;
  dy: View;
  dx: View;
  dweight: View | null;
  dbias: View | null;
}

export interface AttentionArgs {
  q: View; // [B, H, T, D], dense
  /**
   * [B, Hkv, S, D], H a multiple of Hkv (grouped-query attention). In the forward, each head's [S, D] rows
   * are dense (`headsDense`) but the batch and head strides are free, so a KV cache's first S positions
   * are read where they are; the backward gets dense k and v.
   */
  k: View;
  v: View; // [B, Hkv, S, D], as k
  /** Boolean keep-mask broadcast to [B, H, T, S] (stride 0 on broadcast axes), or null. */
  mask: View | null;
  /** Query i may attend key j when j <= i + (S - T): aligned bottom-right, so a KV cache works. */
  causal: boolean;
  scale: number;
  out: View; // [B, H, T, D]
  /**
   * Log-sum-exp of each score row, saved for the backward pass in `statsDtype(q.dtype)` (float32 for half
   * inputs); -Infinity for a fully masked row.
   */
  lse: View; // [B, H, T]
}

export interface AttentionBackwardArgs extends Omit<AttentionArgs, 'out' | 'lse'> {
  out: View;
  lse: View;
  dout: View;
  dq: View;
  dk: View;
  dv: View;
}

/** Whether a [B, Hkv, S, D] view's heads are each dense [S, D] rows (any batch and head strides). */
export function headsDense(v: View): boolean {
  const [, , S, D] = v.shape;
  return (D <= 1 || v.strides[3] === 1) && (S <= 1 || v.strides[2] === D);
}

/** Throws unless attention's K and V (forward) are `headsDense`; `kernel` names the backend's kernel. */
export function assertHeadsDense(kernel: string, ...views: View[]): void {
  for (const v of views)
    if (!headsDense(v))
      throw new Error(
        `${kernel}: expected K/V heads of dense rows, got shape [${v.shape}] strides [${v.strides}]`,
      );
}

/** Element index in `v`'s storage where the [S, D] rows of batch `b`, K/V head `hk` start. */
export function headStart(v: View, b: number, hk: number): number {
  return v.offset + b * v.strides[0] + hk * v.strides[1];
}

/** The sizes of an attention call: batch, query and K/V heads, query rows, keys, head size. */
export interface AttentionDims {
  B: number;
  H: number;
  Hkv: number;
  T: number;
  S: number;
  D: number;
}

export function attentionDims(args: Pick<AttentionArgs, 'q' | 'k'>): AttentionDims {
  const [B, H, T, D] = args.q.shape;
  return { B, H, Hkv: args.k.shape[1], T, S: args.k.shape[2], D };
}

/**
 * Rotary position embedding over dense views: each row of `x` [B, H, T, D] (D even) with the angles of its
 * (batch, position) row of `cos` and `sin` [B, T, D]: out[i] = x[i]·cos[i] + x[j]·sin[i], where j is i's
 * partner in the other half of the row (i ± D/2), and the sines' first half is stored negated. With
 * `transpose`, the adjoint (the gradient with respect to x): out[i] = x[i]·cos[i] + x[j]·sin[j].
 * Each product is rounded to the dtype before the sum, as a multiply then an add would be.
 */
export interface RotaryArgs {
  x: View;
  cos: View;
  sin: View;
  out: View;
  transpose: boolean;
}

export interface AdamWArgs {
  /** Updated in place, as are m and v. All four are contiguous and of one size. */
  param: View;
  grad: View;
  m: View;
  v: View;
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1-based step number, for bias correction. */
  step: number;
}

/** The primitive kernels. Replace one (e.g. with a SIMD version) through `registerKernel`. */
export interface Kernels {
  fill(out: View, value: number): void;
  /** Copies (and casts) `src` into `dst`, which may be a strided view of a larger storage. */
  copy(src: View, dst: View): void;
  unary(op: UnaryOp, x: View, out: View): void;
  /** Comparisons write a bool `out`; other ops write `out` in the inputs' dtype. */
  binary(op: BinaryOp, a: View, b: View, out: View): void;
  where(cond: View, a: View, b: View, out: View): void;
  /** `out` has the input's rank with size 1 on the reduced axes; arg-reductions take one axis and write int32. */
  reduce(op: ReduceOp, x: View, axes: readonly number[], out: View): void;
  /** a: [...batch, M, K], b: [...batch, K, N] (same batch shape, any strides), out: [...batch, M, N]. */
  matmul(a: View, b: View, out: View): void;
  /** out[..i_dim..] = x[..index[..]..] along `dim`; index has out's shape. */
  gather(x: View, dim: number, index: View, out: View): void;
  /** dst[..index[..]..] += src[..] along `dim`, in place; index has src's shape. */
  scatterAdd(dst: View, dim: number, index: View, src: View): void;
  /** Softmax (or log-softmax) over the last axis. */
  softmax(x: View, out: View, log: boolean): void;
  /** Given the forward output y and its gradient dy, writes the gradient of the input. */
  softmaxBackward(y: View, dy: View, dx: View, log: boolean): void;
  /**
   * logits [N, V], targets [N] int32 → out[n] = log_softmax(logits[n])[targets[n]], lse[n] = logsumexp (in
   * `statsDtype(logits.dtype)`).
   */
  logprobs(logits: View, targets: View, out: View, lse: View): void;
  /** dlogits = grad[n] * (onehot(targets[n]) - softmax(logits[n])). */
  logprobsBackward(logits: View, targets: View, lse: View, grad: View, dlogits: View): void;
  layerNorm(args: LayerNormArgs): void;
  layerNormBackward(args: LayerNormBackwardArgs): void;
  rmsNorm(args: LayerNormArgs): void;
  rmsNormBackward(args: LayerNormBackwardArgs): void;
  attention(args: AttentionArgs): void;
  attentionBackward(args: AttentionBackwardArgs): void;
  rotary(args: RotaryArgs): void;
  adamw(args: AdamWArgs): void;
  random(out: View, args: RandomArgs): void;
}

export type KernelName = keyof Kernels;

export interface MemoryInfo {
  /** Live storages and the bytes they hold on this backend. */
  storages: number;
  bytes: number;
}

export interface Backend {
  readonly name: string;
  alloc(dtype: DType, size: number): Storage;
  free(storage: Storage): void;
  /** Writes `data` (already of the storage's dtype) at element `offset`. */
  write(storage: Storage, data: TypedArray, offset?: number): void;
  read(storage: Storage): Promise<TypedArray>;
  /** Present only where a synchronous read is honest (CPU). */
  readSync?(storage: Storage): TypedArray;
  readonly kernels: Kernels;
  /**
   * Present where the backend stores float16 and bfloat16 tensors: the kernels that take half views
   * themselves (at least `fill` and `copy`). The others compute on float32 copies (see half-compute.ts).
   */
  readonly halfKernels?: ReadonlySet<KernelName>;
  /** The dtypes it can store, where that is not every dtype (WebGPU has no float64). */
  readonly dtypes?: ReadonlySet<DType>;
  /** Waits until all queued work has finished (GPU backends); resolves at once on CPU. */
  sync(): Promise<void>;
}
