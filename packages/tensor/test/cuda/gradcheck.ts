/**
 * Finite-difference gradient check run on the cuda device itself (the library's gradcheck takes CPU
 * inputs): analytic gradients of sum(f(x)·c) from backward() on cuda in float64, against central
 * differences of the same scalar, each evaluated on cuda.
 */
import { type Tensor, tensor } from '../../src/index.js';

export async function cudaGradcheck(
  f: (...xs: Tensor[]) => Tensor,
  inputs: { shape: number[]; values: number[] }[],
  { eps = 1e-6, atol = 1e-5, rtol = 1e-3 } = {},
): Promise<void> {
  const make = (values: number[], shape: number[], grad: boolean) =>
    tensor(Float64Array.from(values), { device: 'cuda', dtype: 'float64', shape, requiresGrad: grad });
  const leaves = inputs.map((x) => make(x.values, x.shape, true));
  const probe = f(...leaves);
  const cot = Float64Array.from({ length: probe.size }, (_, i) => Math.sin(1.3 * i + 0.7));
  const c = tensor(cot, { device: 'cuda', dtype: 'float64', shape: probe.shape });
  probe.mul(c).sum().backward();
  const scalar = async (xs: Tensor[]) =>
    await f(...xs)
      .mul(c)
      .sum()
      .item();
  for (let i = 0; i < inputs.length; i++) {
    const analytic = await leaves[i].grad!.data();
    for (let j = 0; j < inputs[i].values.length; j++) {
      const at = (delta: number) =>
        inputs.map((x, k) => {
          const v = [...x.values];
          if (k === i) v[j] += delta;
          return make(v, x.shape, false);
        });
      const numeric = ((await scalar(at(eps))) - (await scalar(at(-eps)))) / (2 * eps);
      const diff = Math.abs(numeric - analytic[j]);
      if (diff > atol + rtol * Math.abs(numeric))
        throw new Error(
          `cuda gradcheck: input ${i} element ${j}: analytic ${analytic[j]}, numeric ${numeric}`,
        );
    }
  }
}
