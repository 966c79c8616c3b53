/**
 * Checks analytic gradients against central finite differences, as torch.autograd.gradcheck does, but with
 * one random cotangent per check: compares d<r, f(x)>/dx from backward() with the numerical estimate for every
 * element of every input. Run it in float64 on the CPU backend.
 */
import { tidy } from '../memory.js';
import { Generator } from '../random.js';
import { randn } from '../ops/creation.js';
import { tensor } from '../ops/creation.js';
import type { Tensor } from '../tensor.js';

export interface GradcheckOptions {
  /** Finite-difference step. */
  eps?: number;
  /** |analytic - numeric| <= atol + rtol * |numeric| must hold elementwise. */
  atol?: number;
  rtol?: number;
  /** Seed of the random cotangent. */
  seed?: number;
}

export interface GradcheckResult {
  ok: boolean;
  /** Largest violation found, with where it was. */
  worst: { input: number; index: number; analytic: number; numeric: number; error: number } | null;
  message: string;
}

function weightedSum(f: (...xs: Tensor[]) => Tensor, inputs: Tensor[], cotangent: Tensor): number {
  return tidy(() =>
    f(...inputs)
      .mul(cotangent)
      .sum()
      .itemSync(),
  );
}

/** Verifies the gradients of f at `inputs` (float64 CPU tensors); does not throw, see `assertGradcheck`. */
export function gradcheck(
  f: (...xs: Tensor[]) => Tensor,
  inputs: Tensor[],
  options: GradcheckOptions = {},
): GradcheckResult {
  const eps = options.eps ?? 1e-6;
  const atol = options.atol ?? 1e-5;
  const rtol = options.rtol ?? 1e-3;
  for (const x of inputs) {
    if (x.dtype !== 'float64' || x.device !== 'cpu') {
      throw new Error(
        `gradcheck: inputs must be float64 tensors on the cpu backend, got ${x.dtype} on ${x.device}`,
      );
    }
  }
  const leaves = inputs.map((x) =>
    tensor(x.dataSync().slice(), { dtype: 'float64', shape: x.shape, requiresGrad: true }),
  );
  const probe = tidy(() => f(...leaves).detach());
  const cotangent = randn(probe.shape, { dtype: 'float64', generator: new Generator(options.seed ?? 1234) });
  probe.dispose();
  tidy(() =>
    f(...leaves)
      .mul(cotangent)
      .sum()
      .backward(),
  );
  let worst: GradcheckResult['worst'] = null;
  leaves.forEach((leaf, input) => {
    const analytic = leaf.grad ? leaf.grad.dataSync() : new Float64Array(leaf.size);
    const data = leaf.dataSync();
    for (let index = 0; index < leaf.size; index++) {
      const perturbed = (delta: number) => {
        const values = data.slice();
        values[index] += delta;
        const moved = leaves.map((l, j) =>
          j === input ? tensor(values, { dtype: 'float64', shape: l.shape }) : l.detach(),
        );
        const y = weightedSum(f, moved, cotangent);
        for (const m of moved) m.dispose();
        return y;
      };
      const numeric = (perturbed(eps) - perturbed(-eps)) / (2 * eps);
      const error = Math.abs(analytic[index] - numeric) - rtol * Math.abs(numeric);
      if (!(error <= atol) && (!worst || !(error <= worst.error))) {
        worst = { input, index, analytic: analytic[index], numeric, error };
      }
    }
  });
  for (const t of [...leaves, cotangent]) t.dispose();
  const w = worst as GradcheckResult['worst'];
  const message = w
    ? `gradient mismatch for input ${w.input} at element ${w.index}: analytic ${w.analytic}, numeric ${w.numeric}`
    : 'gradients match';
  return { ok: w === null, worst: w, message };
}

/** gradcheck that throws with the mismatch when the gradients disagree. */
export function assertGradcheck(
  f: (...xs: Tensor[]) => Tensor,
  inputs: Tensor[],
  options?: GradcheckOptions,
): void {
  const result = gradcheck(f, inputs, options);
  if (!result.ok) throw new Error(`gradcheck: ${result.message}`);
}
