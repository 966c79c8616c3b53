/**
 * The host half of the cuda backend without a GPU: every primitive of the kernel table is called on
 * representative views (test/cuda/scenarios.ts) against a recording launcher, and each recorded launch is
 * checked against the kernel it names: one argument per C parameter, of the matching kind, in order (the
 * packed argument buffer is only correct if this holds), and launch geometry within CUDA's limits.
 */
import { describe, expect, test } from 'vitest';
import { C_PARAM } from '../src/backend/cuda/args.js';
import { coalesce, indexBitsFor } from '../src/backend/cuda/coalesce.js';
import type { GemmPointers } from '../src/backend/cuda/cublas.js';
import type { GemmPlan } from '../src/backend/cuda/gemm-plan.js';
import { cudaKernels } from '../src/backend/cuda/kernels.js';
import type { CudaStorage } from '../src/backend/cuda/launcher.js';
import { Recorder, restride } from './cuda/recorder.js';
import { runScenarios } from './cuda/scenarios.js';
import { kernelParams } from './cuda/signature.js';

const recorded = runScenarios();

describe('cuda launchers (recorded, no GPU)', () => {
  test('every primitive launched at least one kernel', () => {
    const families = new Set(recorded.launches.map((l) => l.kernel.name.split('_')[1]));
    for (const f of [
      'fill',
      'copy',
      'unary',
      'binary',
      'where',
      'reduce',
      'matmul',
      'gather',
      'scatter',
      'softmax',
      'log',
      'logprobs',
      'layer',
      'rms',
      'norm',
      'attention',
      'rotary',
      'adamw',
      'random',
    ])
      expect(families, f).toContain(f);
    expect(recorded.launches.length).toBeGreaterThan(200);
    expect(recorded.scratchLive).toBe(0);
  });

  test('each argument list matches its kernel signature', () => {
    for (const { kernel, args } of recorded.launches) {
      const params = kernelParams(kernel.source, kernel.name);
      expect(args.length, kernel.name).toBe(params.length);
      args.forEach((arg, i) => {
        expect(
          C_PARAM[arg[0]].test(params[i].type),
          `${kernel.name} parameter ${i} (${params[i].type} ${params[i].name}) got ${arg[0]}`,
        ).toBe(true);
      });
    }
  });

  test('launch geometry stays within CUDA limits', () => {
    for (const { kernel, grid, block } of recorded.launches) {
      expect(block, kernel.name).toBeGreaterThanOrEqual(32);
      expect(block, kernel.name).toBeLessThanOrEqual(1024);
      const bounds = /__launch_bounds__\((\d+)\)/.exec(kernel.source);
      if (bounds) expect(block, kernel.name).toBe(Number(bounds[1]));
      expect(grid[0]).toBeGreaterThan(0);
      expect(grid[0]).toBeLessThan(2 ** 31);
      expect(grid[1] ?? 1).toBeLessThanOrEqual(65535);
      expect(grid[2] ?? 1).toBeLessThanOrEqual(65535);
    }
  });

  test('contiguous and broadcast operands merge to low-rank walks', () => {
    expect(coalesce([4, 5, 6], [[30, 6, 1]])).toMatchObject({ shape: [120], rank: 1 });
    // A stride-0 broadcast axis in front of a contiguous block keeps two axes.
    expect(
      coalesce(
        [3, 5],
        [
          [5, 1],
          [0, 1],
        ],
      ),
    ).toEqual({
      shape: [3, 5],
      strides: [
        [5, 1],
        [0, 1],
      ],
      rank: 2,
    });
    expect(coalesce([1, 1, 7], [[7, 7, 1]])).toEqual({ shape: [7], strides: [[1]], rank: 1 });
    // A transposed view cannot merge; rank 5 pads to the 6 bucket with leading size-1 axes.
    const w = coalesce([2, 3, 2, 3, 2], [[1, 2, 6, 12, 36]]);
    expect(w.rank).toBe(6);
    expect(w.shape).toEqual([1, 2, 3, 2, 3, 2]);
    expect(w.strides[0]).toEqual([0, 1, 2, 6, 12, 36]);
    expect(() => coalesce(Array(9).fill(2), [Array.from({ length: 9 }, (_, i) => 3 ** i)])).toThrow(
      /exceeds 8 axes/,
    );
    expect(indexBitsFor(100, [2 ** 31])).toBe(64);
    expect(indexBitsFor(2 ** 20, [2 ** 20])).toBe(32);
  });

  test('matmul picks layouts from strides and pads batch axes', () => {
    const R = new Recorder();
    const K = cudaKernels(R);
    const a = R.view('float32', [5, 6, 7, 8]);
    K.matmul(
      a,
      restride(R.view('float32', [9, 8]), [5, 6, 8, 9], [0, 0, 1, 8]),
      R.view('float32', [5, 6, 7, 9]),
    );
    const [l] = R.launches;
    expect(l.kernel.name).toMatch(/^ar1_matmul_float32_nt_b1_/);
    // Batch axes [5, 6] merge into one of 30 for a, and B's stride-0 batch merges too.
    expect(l.args[10]).toEqual(['dims', [30]]);
    expect(l.args[11]).toEqual(['dims', [56]]);
    expect(l.args[12]).toEqual(['dims', [0]]);
    expect(l.grid).toEqual([1, 1, 30]);
  });

  test('matmul goes to the launcher’s GEMM where it takes the views, else to the kernel', () => {
    const R = new Recorder();
    const gemms: { plan: GemmPlan; pointers: GemmPointers }[] = [];
    R.gemm = (plan, pointers) => gemms.push({ plan, pointers });
    const K = cudaKernels(R);
    const a = R.view('float32', [5, 6, 7, 8]);
    const b = restride(R.view('float32', [9, 8]), [5, 6, 8, 9], [0, 0, 1, 8]);
    const out = R.view('float32', [5, 6, 7, 9]);
    K.matmul(a, b, out);
    expect(R.launches).toEqual([]);
    const [{ plan, pointers }] = gemms;
    // Cᵀ = Bᵀ·Aᵀ: B (a transposed view, op T) first, A second; 30 batches, B repeated (stride 0).
    expect(plan).toMatchObject({ m: 9, n: 7, k: 8, batches: 30, ldc: 9, batchStrideC: 63 });
    expect(plan.first).toEqual({ op: 1, ld: 8, batchStride: 0 });
    expect(plan.second).toEqual({ op: 0, ld: 8, batchStride: 56 });
    expect(pointers).toEqual({
      a: (a.storage as CudaStorage).ptr,
      b: (b.storage as CudaStorage).ptr,
      out: (out.storage as CudaStorage).ptr,
    });
    // Integers, and operands with neither axis contiguous, stay with the kernel.
    K.matmul(R.view('int32', [3, 4]), R.view('int32', [4, 2]), R.view('int32', [3, 2]));
    K.matmul(
      restride(R.view('float32', [24]), [3, 4], [8, 2]),
      R.view('float32', [4, 2]),
      R.view('float32', [3, 2]),
    );
    expect(gemms.length).toBe(1);
    expect(R.launches.map((l) => l.kernel.name.slice(0, 20))).toEqual([
      'ar1_matmul_int32_nn_',
      'ar1_matmul_float32_s',
    ]);
    // bfloat16 goes to the GEMM (GemmEx) as float32 does; without a GEMM, to the half kernel.
    K.matmul(R.view('bfloat16', [3, 4]), R.view('bfloat16', [4, 2]), R.view('bfloat16', [3, 2]));
    expect(gemms.map((g) => g.plan.dtype)).toEqual(['float32', 'bfloat16']);
    R.gemm = undefined;
    K.matmul(R.view('float16', [3, 4]), R.view('float16', [4, 2]), R.view('float16', [3, 2]));
    expect(R.launches.at(-1)?.kernel.name).toMatch(/^ar1_matmul_float16_nn_/);
  });

  test('device-side validation is wired to the error word', () => {
    const R = new Recorder();
    const K = cudaKernels(R);
    K.gather(R.view('float32', [4, 4]), 1, R.view('int32', [4, 2]), R.view('float32', [4, 2]));
    expect(R.launches[0].args.at(-1)).toEqual(['ptr', R.errorWord]);
    expect(() => K.gather(R.view('float32', [4]), 0, R.view('float32', [2]), R.view('float32', [2]))).toThrow(
      /int32/,
    );
    expect(() => K.unary('exp', R.view('int32', [2]), R.view('int32', [2]))).toThrow(/not defined for int32/);
    expect(() =>
      K.softmax(restride(R.view('float32', [4, 4]), [4, 4], [1, 4]), R.view('float32', [4, 4]), false),
    ).toThrow(/contiguous/);
  });
});
