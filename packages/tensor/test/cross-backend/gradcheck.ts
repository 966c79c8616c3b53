/**
 * Finite-difference gradient checks run on a device itself (the library's gradcheck takes CPU inputs):
 * analytic gradients of sum(f(x)·c) from backward() on the device, against central differences of the same
 * scalar, each evaluated on the device. In float64 where the device has it (cuda); in float32 otherwise
 * (webgpu), with a step of 1e-2 — the truncation error (≈ step²) and the rounding of a float32 sum divided by
 * the step (≈ 1e-7 · Σ|terms| / step) both stay near 1e-4, so a tolerance of 1e-3 + 1e-2·|numeric| still
 * fails a gradient that is wrong in any element by more than a percent.
 */
import { describe, test } from 'vitest';
import {
  type DType,
  type Tensor,
  layerNorm,
  logSoftmax,
  matmul,
  rmsNorm,
  scaledDotProductAttention,
  tensor,
} from '../../src/index.js';

export interface DeviceGradcheckOptions {
  dtype: Extract<DType, 'float32' | 'float64'>;
  eps: number;
  atol: number;
  rtol: number;
}

export const FLOAT64_GRADCHECK: DeviceGradcheckOptions = {
  dtype: 'float64',
  eps: 1e-6,
  atol: 1e-5,
  rtol: 1e-3,
};
export const FLOAT32_GRADCHECK: DeviceGradcheckOptions = {
  dtype: 'float32',
  eps: 1e-2,
  atol: 1e-3,
  rtol: 1e-2,
};

export async function deviceGradcheck(
  device: string,
  f: (...xs: Tensor[]) => Tensor,
  inputs: { shape: number[]; values: number[] }[],
  { dtype, eps, atol, rtol }: DeviceGradcheckOptions,
): Promise<void> {
  const typed = (values: number[]) => (dtype === 'float64' ? Float64Array : Float32Array).from(values);
  const make = (values: number[], shape: number[], grad: boolean) =>
    tensor(typed(values), { device, dtype, shape, requiresGrad: grad });
  const leaves = inputs.map((x) => make(x.values, x.shape, true));
  const probe = f(...leaves);
  const cot = Array.from({ length: probe.size }, (_, i) => Math.sin(1.3 * i + 0.7));
  const c = tensor(typed(cot), { device, dtype, shape: probe.shape });
  probe.mul(c).sum().backward();
  const scalar = async (xs: Tensor[]) =>
    await f(...xs)
      .mul(c)
      .sum()
      .item();
  for (let i = 0; i < inputs.length; i++) {
    const analytic = await leaves[i].grad!.data();
    for (let j = 0; j < inputs[i].values.length; j++) {
      // The step actually taken: x ± eps rounded to the dtype, as the device stores it.
      const stepped = (delta: number) => typed([typed([inputs[i].values[j]])[0] + delta])[0];
      const at = (delta: number) =>
        inputs.map((x, k) => {
          const v = [...x.values];
          if (k === i) v[j] = stepped(delta);
          return make(v, x.shape, false);
        });
      const step = stepped(eps) - stepped(-eps);
      const numeric = ((await scalar(at(eps))) - (await scalar(at(-eps)))) / step;
      const diff = Math.abs(numeric - analytic[j]);
      if (diff > atol + rtol * Math.abs(numeric))
        throw new Error(
          `${device} gradcheck (${dtype}): input ${i} element ${j}: analytic ${analytic[j]}, numeric ${numeric}`,
        );
    }
  }
}

/** The primitives with hand-written backward kernels on the GPU backends, gradient-checked on `device`. */
export function deviceGradcheckSuite(device: string, options: DeviceGradcheckOptions): void {
  const check = (f: (...xs: Tensor[]) => Tensor, inputs: { shape: number[]; values: number[] }[]) =>
    deviceGradcheck(device, f, inputs, options);
  describe(`${device}: ${options.dtype} gradients checked on the device`, () => {
    const vals = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.sin(seed + 0.37 * i));
    test('matmul with a transposed operand', async () => {
      await check(
        (a, b) => matmul(a, b.transpose(0, 1)),
        [
          { shape: [3, 4], values: vals(12, 1) },
          { shape: [5, 4], values: vals(20, 2) },
        ],
      );
    });
    test('log_softmax, layer_norm, rms_norm', async () => {
      await check((x) => logSoftmax(x, -1), [{ shape: [2, 5], values: vals(10, 3) }]);
      await check(
        (x, w, b) => layerNorm(x, w, b),
        [
          { shape: [3, 4], values: vals(12, 4) },
          { shape: [4], values: vals(4, 5) },
          { shape: [4], values: vals(4, 6) },
        ],
      );
      await check(
        (x, w) => rmsNorm(x, w),
        [
          { shape: [3, 4], values: vals(12, 7) },
          { shape: [4], values: vals(4, 8) },
        ],
      );
    });
    test('causal grouped-query attention with a KV cache offset', async () => {
      // q [1, 2, 3, 4] against k, v [1, 1, 5, 4]: two query heads share one KV head, and S > T.
      await check(
        (q, k, v) => scaledDotProductAttention(q, k, v, { causal: true }),
        [
          { shape: [1, 2, 3, 4], values: vals(24, 9) },
          { shape: [1, 1, 5, 4], values: vals(20, 10) },
          { shape: [1, 1, 5, 4], values: vals(20, 11) },
        ],
      );
    });
  });
}
