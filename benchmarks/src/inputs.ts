/**
 * Input data shared by both libraries: plain typed arrays from a seeded generator, so ours and tfjs see
 * exactly the same numbers and their outputs can be compared.
 */
import * as T from '@agent-r1/tensor';
import type { Runner } from './harness.js';

export interface Input {
  data: Float32Array;
  shape: number[];
}

export interface IntInput {
  data: Int32Array;
  shape: number[];
}

/** Numbers uniform on [0, 1) from the tensor library's seeded generator. */
function uniformSource(seed: number): () => number {
  const generator = new T.Generator(seed);
  return () => generator.random();
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

/** Normal(0, std²) samples (Box–Muller). */
export function randn(shape: number[], seed: number, std = 1): Input {
  const next = uniformSource(seed);
  const data = new Float32Array(size(shape));
  for (let i = 0; i < data.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - next())) * std;
    const theta = 2 * Math.PI * next();
    data[i] = r * Math.cos(theta);
    if (i + 1 < data.length) data[i + 1] = r * Math.sin(theta);
  }
  return { data, shape };
}

/** Integers uniform in [0, high). */
export function randint(high: number, shape: number[], seed: number): IntInput {
  const next = uniformSource(seed);
  const data = new Int32Array(size(shape));
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(next() * high);
  return { data, shape };
}

export function constant(value: number, shape: number[]): Input {
  return { data: new Float32Array(size(shape)).fill(value), shape };
}

/** Our tensor holding an input's data. */
export function ours(input: Input | IntInput, options: { requiresGrad?: boolean } = {}): T.Tensor {
  return T.tensor(input.data, { shape: input.shape, ...options });
}

/**
 * A runner for our library: `fn` computes the output from inputs built once; each run reads the result
 * back and disposes everything the call created.
 */
export function oursRunner(inputs: T.Tensor[], fn: () => T.Tensor): Runner {
  return {
    run() {
      let out: Float32Array | undefined;
      T.tidy(() => {
        out = fn().dataSync() as Float32Array;
      });
      return out!;
    },
    dispose: () => T.dispose(inputs),
  };
}

export const shapeText = (shape: number[]) => shape.join('x');
