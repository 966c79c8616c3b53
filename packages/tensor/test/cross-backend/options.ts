/** Options of the cross-backend suite: property runs, tolerances per kernel family, which families. */
import type { Tolerance } from './compare.js';

export type Family = 'elementwise' | 'reductions' | 'matmul' | 'indexing' | 'fused' | 'long loops' | 'random';

export interface SuiteOptions {
  /** Property runs per test (keep modest on software GPUs). */
  runs: number;
  /**
   * Only these families, e.g. to rerun matmul on a second kernel variant. Default: all but 'long loops'
   * (fixed large cases, costly on emulators; WebGPU opts in for llvmpipe's loop limit).
   */
  families?: Family[];
  tolerances: {
    elementwise: Tolerance;
    reduce: Tolerance;
    /** Per unit of K (the reduction length): atol = matmul.atol·K. */
    matmul: Tolerance;
    softmax: Tolerance;
    norm: Tolerance;
    attention: Tolerance;
    optim: Tolerance;
    /** uniform and randint (randint is compared exactly, being int32). */
    random: Tolerance;
    /** normal: Box–Muller through the device's f32 log, sqrt and cos. */
    normal: Tolerance;
  };
}
