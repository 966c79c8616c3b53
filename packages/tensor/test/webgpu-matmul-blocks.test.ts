/**
 * The software (CPU rasteriser) matmul picks its register block from the output's shape (directBlock). The
 * cross-backend suite's random shapes are too small to reach the large blocks, so this runs each block on
 * shapes that select it — odd row counts, a partial last column tile — against the CPU backend, through each
 * code path: vec4 A, B and output (K = 36); a K that is not a multiple of 4 (the last step runs past the end
 * of K and must add nothing, even next to infinities); strided (transposed) operands with an odd N.
 */
import { describe, expect, test } from 'vitest';
import { matmul, registerBackend, tensor, transpose } from '../src/index.js';
import { createWebGpuBackend } from '../src/backend/webgpu/index.js';
import { DIRECT_BLOCKS, directBlock } from '../src/backend/webgpu/kernels/matmul.js';
import { acquireDevice } from './cross-backend/device.js';

const available = await acquireDevice('webgpu');
const DEVICE = 'webgpu-software-blocks';
if (available) registerBackend(DEVICE, await createWebGpuBackend({ kernels: 'software' }, DEVICE));

const BATCHES = 2;

/** The smallest shape (odd M, N ≡ nMod8 mod 8) for which the kernel picks this block. */
function shapeSelecting([R, C]: readonly [number, number], nMod8: number): [number, number] {
  for (let M = R + 1; M < 16 * R; M += 2)
    for (let N = 8 * C + nMod8; N < 32 * C; N += 8) {
      const [r, c] = directBlock(M, N, BATCHES);
      if (r === R && c === C) return [M, N];
    }
  throw new Error(`no shape selects the ${R}x${C} block`);
}

/** Deterministic values in [-1, 1) (a simple LCG: the point is coverage, not randomness). */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

const CASES = [
  { name: 'vec4 operands', K: 36, nMod8: 4, transposed: false },
  { name: 'K % 4 = 1', K: 37, nMod8: 4, transposed: false },
  { name: 'transposed, odd N', K: 37, nMod8: 3, transposed: true },
];

describe.skipIf(!available)('webgpu software matmul register blocks', () => {
  test.each(DIRECT_BLOCKS.map((b) => [`${b[0]}x${b[1]}`, b] as const))(
    '%s block equals the CPU on every path',
    async (_name, block) => {
      for (const { name, K, nMod8, transposed } of CASES) {
        const [M, N] = shapeSelecting(block, nMod8);
        const a = values(BATCHES * M * K, M);
        const b = values(BATCHES * K * N, N);
        // Infinities in the last k (A's row 0, B's column 1): the clamped reads past K must not meet them.
        a[K - 1] = Number.POSITIVE_INFINITY;
        b[(K - 1) * N + 1] = Number.NEGATIVE_INFINITY;
        const on = (device: string) => {
          // A transposed operand is stored transposed and viewed back: same values, swapped strides.
          const operand = (data: Float32Array, rows: number, cols: number) => {
            const x = tensor(data, { device, shape: [BATCHES, rows, cols] });
            return transposed ? transpose(transpose(x, 1, 2).contiguous(), 1, 2) : x;
          };
          return matmul(operand(a, M, K), operand(b, K, N)).data() as Promise<Float32Array>;
        };
        const want = await on('cpu');
        const got = await on(DEVICE);
        let worst = 0;
        for (let i = 0; i < want.length; i++) {
          if (!Number.isFinite(want[i]) || !Number.isFinite(got[i]))
            expect(got[i], `${name}: element ${i} of ${M}x${K} @ ${K}x${N}`).toBe(want[i]);
          else worst = Math.max(worst, Math.abs(got[i] - want[i]) - 1e-5 * Math.abs(want[i]));
        }
        expect(worst, `${name}: ${M}x${K} @ ${K}x${N}`).toBeLessThan(2e-6 * K);
      }
    },
  );
});
