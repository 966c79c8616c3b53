/**
 * The anchor: the same ops on @tensorflow/tfjs-backend-cpu (plain JavaScript, like ours), composed from
 * tfjs's public ops where tfjs has no fused kernel. Each factory builds its inputs once and returns a Runner.
 *
 * tfjs-core's Node entry point registers neither gradients (see tfjs-gradients.ts) nor the chained ops, so
 * ops are called as functions (tf.add(a, b), not a.add(b)).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import type { Runner } from '../harness.js';
import type { Input, IntInput } from '../inputs.js';
import { registerTfjsGradients } from './tfjs-gradients.js';

/** Selects the CPU backend; registers gradients only when a benchmark needs them (it takes seconds). */
export async function initTfjs(withGradients: boolean): Promise<string> {
  if (withGradients) await registerTfjsGradients();
  // Production mode: tfjs skips its debug-time checks (and the banner suggesting tfjs-node).
  tf.enableProdMode();
  await tf.setBackend('cpu');
  await tf.ready();
  return tf.version_core;
}

export const tfjsTensorCount = () => tf.memory().numTensors;

const toTf = (input: Input) => tf.tensor(input.data, input.shape, 'float32');

function runner(inputs: tf.Tensor[], fn: () => tf.Tensor): Runner {
  return {
    run() {
      let out: ArrayLike<number> | undefined;
      tf.tidy(() => {
        out = fn().dataSync();
      });
      return out!;
    },
    dispose: () => tf.dispose(inputs),
  };
}

export function matmul(a: Input, b: Input): Runner {
  const [ta, tb] = [toTf(a), toTf(b)];
  return runner([ta, tb], () => tf.matMul(ta, tb));
}

export function add(a: Input, b: Input): Runner {
  const [ta, tb] = [toTf(a), toTf(b)];
  return runner([ta, tb], () => tf.add(ta, tb));
}

export function softmax(x: Input): Runner {
  const tx = toTf(x);
  return runner([tx], () => tf.softmax(tx));
}

/** logSoftmax then gather of each row's target (by flat index), as tfjs has no fused logprobs. */
export function logprobs(logits: Input, targets: IntInput): Runner {
  const [rows, vocab] = logits.shape;
  const tl = toTf(logits);
  const flat = tf.tensor1d(
    Array.from(targets.data, (t, row) => row * vocab + t),
    'int32',
  );
  return runner([tl, flat], () => tf.gather(tf.reshape(tf.logSoftmax(tl), [rows * vocab]), flat));
}

/** Layer norm composed from tf.moments: (x - mean) * rsqrt(var + eps) * weight + bias. */
export function layerNorm(x: Input, weight: Input, bias: Input, eps: number): Runner {
  const [tx, tw, tb] = [toTf(x), toTf(weight), toTf(bias)];
  return runner([tx, tw, tb], () => {
    const { mean, variance } = tf.moments(tx, -1, true);
    return tf.add(tf.mul(tf.mul(tf.sub(tx, mean), tf.rsqrt(tf.add(variance, eps))), tw), tb);
  });
}

/** Causal attention composed: softmax(q kᵀ · scale + causal bias) v, the bias precomputed once. */
export function causalAttention(q: Input, k: Input, v: Input): Runner {
  const [tq, tk, tv] = [toTf(q), toTf(k), toTf(v)];
  const T = q.shape[2];
  const S = k.shape[2];
  const scale = 1 / Math.sqrt(q.shape[3]);
  const bias = new Float32Array(T * S);
  for (let i = 0; i < T; i++) for (let j = 0; j < S; j++) if (j > i + (S - T)) bias[i * S + j] = -1e9;
  const tbias = tf.tensor2d(bias, [T, S]);
  return runner([tq, tk, tv, tbias], () => {
    const scores = tf.add(tf.mul(tf.matMul(tq, tk, false, true), scale), tbias);
    return tf.matMul(tf.softmax(scores), tv);
  });
}

export interface MlpInputs {
  x: Input;
  targets: IntInput;
  classes: number;
  /** [weight, bias] per layer; ReLU between layers, none after the last. */
  layers: [Input, Input][];
}

/**
 * Forward and backward of an MLP with softmax cross-entropy (mean over the batch), gradients by
 * tf.variableGrads. Reads every gradient; returns the first layer's weight gradient.
 */
export function mlpStep(inputs: MlpInputs): Runner {
  const x = toTf(inputs.x);
  const labels = tf.tidy(() =>
    tf.cast(tf.oneHot(tf.tensor1d(inputs.targets.data, 'int32'), inputs.classes), 'float32'),
  );
  const vars = tf.tidy(() =>
    inputs.layers.map(([w, b]) => [tf.variable(toTf(w)), tf.variable(toTf(b))] as const),
  );
  const first = vars[0][0];
  const loss = () =>
    tf.tidy(() => {
      let h: tf.Tensor = x;
      vars.forEach(([w, b], i) => {
        h = tf.add(tf.matMul(h, w), b);
        if (i < vars.length - 1) h = tf.relu(h);
      });
      return tf.losses.softmaxCrossEntropy(labels, h) as tf.Scalar;
    });
  return {
    run() {
      let out: ArrayLike<number> | undefined;
      tf.tidy(() => {
        const { value, grads } = tf.variableGrads(loss);
        value.dataSync();
        for (const [name, g] of Object.entries(grads)) {
          const data = g.dataSync();
          if (name === first.name) out = data;
        }
      });
      return out!;
    },
    dispose: () => tf.dispose([x, labels, ...vars.flat()]),
  };
}
