/**
 * cuBLAS through koffi, for the matmuls whose layout it takes as it is (gemm-plan.ts): one handle bound to
 * the backend's stream, strided-batched SGEMM/DGEMM, and GemmEx for float16/bfloat16 (float32 compute and
 * scalars: tensor cores where the GPU has them, one rounding of each result). Optional: the backend uses it when libcublas is
 * found (or when asked to, and then a missing library is an error naming it). Device pointers cross the
 * FFI as uint64_t, as in the driver API; alpha and beta are host scalars (the default pointer mode).
 */
import { type KoffiModule, loadKoffi, outPointer } from './ffi.js';
import type { GemmPlan } from './gemm-plan.js';
import { loadLibrary, type SearchEnv, systemSearchEnv } from './libs.js';

const CUBLAS_STATUS_SUCCESS = 0;
/** cublasMath_t: plain FP32 arithmetic, or FP32 matmuls on TF32 tensor cores (10-bit mantissa inputs). */
const CUBLAS_DEFAULT_MATH = 0;
const CUBLAS_TF32_TENSOR_OP_MATH = 3;
/** cudaDataType_t of the half types, cublasComputeType_t and cublasGemmAlgo_t for GemmEx. */
const CUDA_DATA_TYPE = { float16: 2, bfloat16: 14 } as const;
const CUBLAS_COMPUTE_32F = 68;
const CUBLAS_GEMM_DEFAULT = -1;

const gemmArgs = (t: string) =>
  `void *handle, int transa, int transb, int m, int n, int k, const ${t} *alpha, uint64_t A, int lda, int64_t strideA, uint64_t B, int ldb, int64_t strideB, const ${t} *beta, uint64_t C, int ldc, int64_t strideC, int batchCount`;

export const CUBLAS_PROTOTYPES = {
  cublasCreate: 'int cublasCreate_v2(_Out_ void **handle)',
  cublasDestroy: 'int cublasDestroy_v2(void *handle)',
  cublasSetStream: 'int cublasSetStream_v2(void *handle, void *stream)',
  cublasGetVersion: 'int cublasGetVersion_v2(void *handle, _Out_ int *version)',
  cublasSetMathMode: 'int cublasSetMathMode(void *handle, int mode)',
  cublasGetStatusName: 'const char *cublasGetStatusName(int status)',
  cublasGetStatusString: 'const char *cublasGetStatusString(int status)',
  cublasSgemmStridedBatched: `int cublasSgemmStridedBatched(${gemmArgs('float')})`,
  cublasDgemmStridedBatched: `int cublasDgemmStridedBatched(${gemmArgs('double')})`,
  cublasGemmStridedBatchedEx:
    'int cublasGemmStridedBatchedEx(void *handle, int transa, int transb, int m, int n, int k, const float *alpha, uint64_t A, int Atype, int lda, int64_t strideA, uint64_t B, int Btype, int ldb, int64_t strideB, const float *beta, uint64_t C, int Ctype, int ldc, int64_t strideC, int batchCount, int computeType, int algo)',
} as const;

type Call = keyof typeof CUBLAS_PROTOTYPES;
type Fn = (...args: unknown[]) => unknown;

export class CublasError extends Error {
  constructor(
    readonly call: string,
    readonly status: number,
    detail: string,
  ) {
    super(`cuda: cuBLAS ${call} failed: ${detail}`);
    this.name = 'CublasError';
  }
}

/** Device addresses of one matmul's operands (first element of each view). */
export interface GemmPointers {
  a: bigint;
  b: bigint;
  out: bigint;
}

export interface Cublas {
  readonly path: string;
  readonly version: number;
  /** Queues out = a·b on the handle's stream as `plan` says. */
  gemm(plan: GemmPlan, pointers: GemmPointers): void;
  dispose(): void;
}

export interface CublasOptions {
  /** The CUstream to queue on (the driver's and the runtime API's stream handles are the same). */
  stream: bigint;
  /** Let float32 matmuls run on TF32 tensor cores (torch's `allow_tf32`); off by default. */
  tf32?: boolean;
  search?: SearchEnv;
}

export async function loadCublas(options: CublasOptions): Promise<Cublas> {
  const koffi: KoffiModule = await loadKoffi();
  const { lib, path } = loadLibrary('cublas', (p) => koffi.load(p), options.search ?? systemSearchEnv());
  const f = {} as Record<Call, Fn>;
  for (const [name, proto] of Object.entries(CUBLAS_PROTOTYPES)) f[name as Call] = lib.func(proto);
  const check = (call: Call, ...args: unknown[]) => {
    const status = f[call](...args) as number;
    if (status !== CUBLAS_STATUS_SUCCESS)
      throw new CublasError(
        call,
        status,
        `${String(f.cublasGetStatusName(status))} (${status}): ${String(f.cublasGetStatusString(status))}`,
      );
  };
  const box: unknown[] = [null];
  check('cublasCreate', box);
  const handle = outPointer(box);
  const versionBox: unknown[] = [0];
  try {
    check('cublasSetStream', handle, options.stream);
    check('cublasSetMathMode', handle, options.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    check('cublasGetVersion', handle, versionBox);
  } catch (e) {
    f.cublasDestroy(handle);
    throw e;
  }
  const one = { float32: new Float32Array([1]), float64: new Float64Array([1]) };
  const zero = { float32: new Float32Array([0]), float64: new Float64Array([0]) };
  return {
    path,
    version: Number(versionBox[0]),
    gemm(plan, p) {
      const { first, second } = plan;
      const shape = [handle, first.op, second.op, plan.m, plan.n, plan.k];
      if (plan.dtype === 'float16' || plan.dtype === 'bfloat16') {
        const type = CUDA_DATA_TYPE[plan.dtype];
        check(
          'cublasGemmStridedBatchedEx',
          ...shape,
          one.float32,
          p.b,
          type,
          first.ld,
          first.batchStride,
          p.a,
          type,
          second.ld,
          second.batchStride,
          zero.float32,
          p.out,
          type,
          plan.ldc,
          plan.batchStrideC,
          plan.batches,
          CUBLAS_COMPUTE_32F,
          CUBLAS_GEMM_DEFAULT,
        );
        return;
      }
      check(
        plan.dtype === 'float32' ? 'cublasSgemmStridedBatched' : 'cublasDgemmStridedBatched',
        ...shape,
        one[plan.dtype],
        p.b,
        first.ld,
        first.batchStride,
        p.a,
        second.ld,
        second.batchStride,
        zero[plan.dtype],
        p.out,
        plan.ldc,
        plan.batchStrideC,
        plan.batches,
      );
    },
    dispose() {
      f.cublasDestroy(handle);
    },
  };
}
