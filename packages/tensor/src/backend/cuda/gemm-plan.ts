/**
 * How a batched row-major matmul C[b] = A[b]·B[b] becomes one cuBLAS strided-batched GEMM, which reads
 * column-major matrices. A row-major M×N matrix with row stride ld is, read column-major, its N×M
 * transpose with the same ld; so C = A·B is computed as Cᵀ = Bᵀ·Aᵀ: cuBLAS's m, n, k are N, M, K, its
 * first operand is B and its second A. An operand whose columns are contiguous (a plain row-major matrix)
 * is passed as it is (op N); one whose rows are contiguous (a transposed view) with op T: either way no
 * copy is made. Pure host arithmetic, so the mapping is tested without a GPU against the GEMM's definition.
 */
import type { DType } from '../../dtype.js';
import { sizeOf } from '../../shape.js';
import type { View } from '../backend.js';
import { coalesce } from './coalesce.js';

/** cuBLAS's cublasOperation_t values. */
export const CUBLAS_OP_N = 0;
export const CUBLAS_OP_T = 1;

/** One column-major operand: its op, leading dimension and batch stride, all in elements. */
export interface GemmOperand {
  op: typeof CUBLAS_OP_N | typeof CUBLAS_OP_T;
  ld: number;
  batchStride: number;
}

/** The dtypes cuBLAS multiplies here: float16 and bfloat16 through cublasGemmStridedBatchedEx. */
export type GemmDtype = 'float32' | 'float64' | 'float16' | 'bfloat16';
const GEMM_DTYPES: readonly DType[] = ['float32', 'float64', 'float16', 'bfloat16'];

/**
 * The arguments of cublas{S,D}gemmStridedBatched (or GemmStridedBatchedEx) for C = A·B (alpha 1, beta 0),
 * pointers left out.
 */
export interface GemmPlan {
  dtype: GemmDtype;
  m: number;
  n: number;
  k: number;
  /** cuBLAS's first operand: our B. */
  first: GemmOperand;
  /** cuBLAS's second operand: our A. */
  second: GemmOperand;
  ldc: number;
  batchStrideC: number;
  batches: number;
}

const INT_MAX = 2 ** 31 - 1;

/**
 * The column-major reading of a row-major rows×cols operand with strides (rowStride, colStride), as the
 * cols×rows matrix cuBLAS should see (its transpose): op N when columns are contiguous, op T when rows
 * are; undefined for any other layout (or a leading dimension cuBLAS would refuse).
 */
function operand(
  rowStride: number,
  colStride: number,
  rows: number,
  cols: number,
): Omit<GemmOperand, 'batchStride'> | undefined {
  // Stored cols×rows column-major (op N) needs ld ≥ cols; stored rows×cols (op T) needs ld ≥ rows.
  if (colStride === 1 || cols === 1) {
    const ld = rows === 1 ? Math.max(cols, 1) : rowStride;
    if (ld >= Math.max(cols, 1)) return { op: CUBLAS_OP_N, ld };
  }
  if (rowStride === 1 || rows === 1) {
    const ld = cols === 1 ? Math.max(rows, 1) : colStride;
    if (ld >= Math.max(rows, 1)) return { op: CUBLAS_OP_T, ld };
  }
  return undefined;
}

/**
 * The GEMM for out = a·b (batch axes already broadcast to out's by the op layer, stride 0 where an
 * operand is broadcast), or undefined when cuBLAS cannot take the views as they are: integer types,
 * operands with neither axis contiguous, an output whose columns are not contiguous, batch axes that do
 * not merge into one strided axis, an empty inner dimension, or sizes past 32-bit ints. The caller then
 * runs its own kernel.
 */
export function planGemm(a: View, b: View, out: View): GemmPlan | undefined {
  const dtype = out.dtype as GemmDtype;
  if (!GEMM_DTYPES.includes(dtype) || a.dtype !== dtype || b.dtype !== dtype) return undefined;
  const rank = out.shape.length;
  if (rank < 2) return undefined;
  const M = out.shape[rank - 2];
  const N = out.shape[rank - 1];
  const K = a.shape[rank - 1];
  // K = 0 must still write zeros: the kernel does, and BLAS's beta = 0 contract is not worth leaning on.
  if (K === 0 || [M, N, K].some((d) => d > INT_MAX)) return undefined;
  const first = operand(b.strides[rank - 2], b.strides[rank - 1], K, N);
  const second = operand(a.strides[rank - 2], a.strides[rank - 1], M, K);
  // C is written through op N only: its columns must be contiguous, rows ld apart.
  const ldc = M === 1 ? Math.max(N, 1) : out.strides[rank - 2];
  if (!first || !second || (out.strides[rank - 1] !== 1 && N !== 1) || ldc < Math.max(N, 1)) return undefined;
  const batchShape = out.shape.slice(0, rank - 2);
  const batches = sizeOf(batchShape);
  const walk = coalesce(batchShape, [
    a.strides.slice(0, rank - 2),
    b.strides.slice(0, rank - 2),
    out.strides.slice(0, rank - 2),
  ]);
  const axes = walk.shape.map((d, i) => [d, i] as const).filter(([d]) => d !== 1);
  if (axes.length > 1 || batches > INT_MAX) return undefined;
  const strideOf = (operandIndex: number) => (axes.length === 0 ? 0 : walk.strides[operandIndex][axes[0][1]]);
  const batchStrideC = axes.length === 0 ? 0 : strideOf(2);
  // Distinct batches must not write over each other; operands may repeat one matrix (stride 0).
  if (batches > 1 && (batchStrideC <= 0 || strideOf(0) < 0 || strideOf(1) < 0)) return undefined;
  return {
    dtype,
    m: N,
    n: M,
    k: K,
    first: { ...first, batchStride: strideOf(1) },
    second: { ...second, batchStride: strideOf(0) },
    ldc,
    batchStrideC,
    batches,
  };
}
