/**
 * The read-as-a-promise variants that let the policy run on WebGPU (whose reads cannot be synchronous):
 * extendAsync, generateAsync and clipGradNormAsync give exactly the synchronous functions' results on the
 * CPU, and the CPU's results on WebGPU (skipped with one line without an adapter; REQUIRE_WEBGPU=1, set
 * by CI, makes that a failure). The model has the copy head, which indexes by token on the host.
 */
import { Generator, type Tensor, tensor } from '@agent-r1/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDevice } from '../../tensor/test/cross-backend/device.js';
import {
  TransformerLM,
  clipGradNorm,
  clipGradNormAsync,
  extend,
  extendAsync,
  generate,
  generateAsync,
} from '../src/index.js';

const CONFIG = {
  vocabSize: 29,
  dModel: 16,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  maxLength: 32,
  seed: 7,
  copyHead: true,
  copyMatch: true,
  copySourceGate: true,
};
const PROMPTS = [[1, 2, 3, 4, 5], [6, 7], [8]];
// A decoding step where one row appends a whole observation: extend's split into two passes.
const MIXED = [[9], [10, 11, 12, 13], [14]];
const sampling = () => ({ maxNewTokens: 10, temperature: 1.3, generator: new Generator(11) });

const cpuModel = new TransformerLM(CONFIG);
afterAll(() => cpuModel.dispose());

async function extendTwice(model: TransformerLM, read: typeof extendAsync) {
  const cache = model.createCache(PROMPTS.length);
  try {
    return [await read(model, cache, PROMPTS), await read(model, cache, MIXED)];
  } finally {
    cache.dispose();
  }
}

function flat(rows: (Float64Array | null)[][]): number[] {
  return rows.flat().flatMap((r) => (r ? [...r] : [Number.NaN]));
}

/** Parameters with gradients, made on `device`: float32, 3 tensors. */
function withGradients(device: string): Tensor[] {
  const grads = [
    [3, -4, 0.5],
    [12, 1],
    [-2, 2, 2, 7],
  ];
  return grads.map((g) => {
    const p = tensor(new Float32Array(g.length), { device, requiresGrad: true });
    p.setGrad(tensor(Float32Array.from(g), { device }));
    return p;
  });
}

describe('on the CPU, the async variants give the synchronous results exactly', () => {
  it('extendAsync = extend, over one and two passes', async () => {
    const sync = await extendTwice(cpuModel, async (m, c, r) => extend(m, c, r));
    const async_ = await extendTwice(cpuModel, extendAsync);
    expect(flat(async_)).toEqual(flat(sync));
    expect(async_[0][0]).toHaveLength(CONFIG.vocabSize);
  });

  it('generateAsync = generate: tokens, log-probs, finish reasons', async () => {
    const a = generate(cpuModel, PROMPTS, sampling());
    const b = await generateAsync(cpuModel, PROMPTS, sampling());
    expect(b.tokens).toEqual(a.tokens);
    expect(b.logprobs).toEqual(a.logprobs);
    expect(b.finishReasons).toEqual(a.finishReasons);
    expect(b.cache.lengths).toEqual(a.cache.lengths);
    a.cache.dispose();
    b.cache.dispose();
  });

  it('clipGradNormAsync = clipGradNorm: the norm and the clipped gradients', async () => {
    const a = withGradients('cpu');
    const b = withGradients('cpu');
    expect(await clipGradNormAsync(b, 2)).toBe(clipGradNorm(a, 2));
    for (const [i, p] of a.entries()) expect(b[i].grad!.dataSync()).toEqual(p.grad!.dataSync());
  });

  it('the copy head refuses token rows that do not match the ids, naming them', () => {
    const ids = tensor(Int32Array.from([1, 2, 3, 4]), { shape: [2, 2] });
    expect(() => cpuModel.forward(ids, { tokens: [[1, 2]] })).toThrow(
      /tokens must hold the 2 rows of ids with at least 2 tokens each, got 1 rows/,
    );
  });
});

const webgpu = await acquireDevice('webgpu');

describe.skipIf(!webgpu)('on WebGPU, the CPU results', () => {
  it("extendAsync and generateAsync: the CPU's logits and sampled tokens", async () => {
    const gpuModel = new TransformerLM(CONFIG).to('webgpu');
    try {
      const cpu = flat(await extendTwice(cpuModel, extendAsync));
      const gpu = flat(await extendTwice(gpuModel, extendAsync));
      expect(gpu).toHaveLength(cpu.length);
      for (const [i, v] of cpu.entries()) expect(gpu[i], `logit ${i}`).toBeCloseTo(v, 4);
      const a = generate(cpuModel, PROMPTS, sampling());
      const b = await generateAsync(gpuModel, PROMPTS, sampling());
      expect(b.tokens).toEqual(a.tokens);
      a.cache.dispose();
      b.cache.dispose();
    } finally {
      gpuModel.dispose();
    }
  });

  it('the copy head without host token rows says what to pass', () => {
    const gpuModel = new TransformerLM(CONFIG).to('webgpu');
    const ids = tensor(Int32Array.from([1, 2]), { shape: [1, 2], device: 'webgpu' });
    try {
      expect(() => gpuModel.forward(ids)).toThrow(
        /copy head needs the token ids on the host.*pass options\.tokens/,
      );
    } finally {
      ids.dispose();
      gpuModel.dispose();
    }
  });

  it("clipGradNormAsync: the CPU's norm and clipped gradients (float32 sums: no float64 there)", async () => {
    const cpu = withGradients('cpu');
    const gpu = withGradients('webgpu');
    const norm = await clipGradNormAsync(gpu, 2);
    expect(norm).toBeCloseTo(clipGradNorm(cpu, 2), 5);
    for (const [i, p] of cpu.entries()) {
      const got = await gpu[i].grad!.data();
      for (const [j, v] of p.grad!.dataSync().entries()) expect(got[j]).toBeCloseTo(v, 6);
    }
  });
});
