/** Parameter initialisers, each drawing from an explicit generator so a seed fixes the model. */
import { type Generator, type Tensor, normal, ones, uniform, zeros, type FloatDType } from '@agent-r1/tensor';

export interface InitOptions {
  dtype?: FloatDType;
  device?: string;
  generator?: Generator;
}

export function normalInit(shape: number[], std: number, o: InitOptions): Tensor {
  return normal(shape, 0, std, { dtype: o.dtype, device: o.device, generator: o.generator });
}

export function uniformInit(shape: number[], bound: number, o: InitOptions): Tensor {
  return uniform(shape, -bound, bound, { dtype: o.dtype, device: o.device, generator: o.generator });
}

export function zerosInit(shape: number[], o: InitOptions): Tensor {
  return zeros(shape, { dtype: o.dtype ?? 'float32', device: o.device });
}

export function onesInit(shape: number[], o: InitOptions): Tensor {
  return ones(shape, { dtype: o.dtype ?? 'float32', device: o.device });
}
