/**
 * Hugging Face causal-LM folders: tiny random Llama, Qwen2 and Qwen3 checkpoints written by
 * fixtures/hf/make-reference.py, whose PyTorch forward pass (after transformers' modeling code) gave the
 * reference logits and greedy continuations committed beside them.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Tensor, memory, tensor } from '@agent-r1/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HF_WEIGHTS_INDEX_FILE,
  SafetensorsFile,
  TransformerLM,
  generate,
  loadHfModel,
  loadHfWeights,
  readHfModelInfo,
  loadSafetensors,
  saveHfModel,
  writeSafetensors,
} from '../src/index.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'hf');
const NAMES = ['llama', 'llama-untied-bf16', 'qwen2', 'qwen2-sharded-f16', 'qwen3'] as const;
const modelDir = (name: string) => join(FIXTURES, 'models', name);

interface Reference {
  prompts: number[][];
  greedy: number[][];
  steps: number;
  float32VsFloat64: number;
}
const reference = (name: string): Reference =>
  JSON.parse(readFileSync(join(FIXTURES, 'reference', `${name}.json`), 'utf8'));

/** Logits differ from PyTorch's by float32 rounding alone: |Δ| ≤ 2e-6 of the largest logit (≈ 30 here). */
const RELATIVE_TOLERANCE = 2e-6;

function logitsOf(model: TransformerLM, prompt: number[]): Float32Array {
  const { logits } = model.forward(tensor(Int32Array.from(prompt), { shape: [1, prompt.length] }));
  const out = logits.dataSync() as Float32Array;
  logits.dispose();
  return out;
}

/** The largest |a − b| and the largest |b|. */
function compare(a: ArrayLike<number>, b: ArrayLike<number>): { diff: number; scale: number } {
  expect(a.length).toBe(b.length);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return { diff, scale };
}

/** Every tensor of a folder's weight files as its raw elements (bf16/f16 as their 16-bit patterns). */
async function rawTensors(
  dir: string,
): Promise<Map<string, { dtype: string; shape: readonly number[]; data: number[] }>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.safetensors'));
  const out = new Map<string, { dtype: string; shape: readonly number[]; data: number[] }>();
  for (const f of files) {
    const file = await SafetensorsFile.open(join(dir, f));
    for (const name of file.names) {
      const t = await file.read(name);
      out.set(name, { ...file.info(name), data: [...t.rawDataSync()] });
      t.dispose();
    }
    await file.close();
  }
  return out;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hf-model-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A copy of a fixture folder to break. */
async function copyOf(name: string, as: string): Promise<string> {
  const dir = join(scratch, as);
  await cp(modelDir(name), dir, { recursive: true });
  return dir;
}

async function editJson(path: string, edit: (json: Record<string, unknown>) => void): Promise<void> {
  const json = JSON.parse(await readFile(path, 'utf8'));
  edit(json);
  await writeFile(path, JSON.stringify(json));
}

describe('Hugging Face checkpoints against the PyTorch reference', () => {
  for (const name of NAMES) {
    it(`${name}: logits equal PyTorch's to float32 rounding, greedy continuations are identical`, async () => {
      const ref = reference(name);
      const logits = (await loadSafetensors(join(FIXTURES, 'reference', `${name}.safetensors`))).tensors;
      const { model, architecture } = await loadHfModel(modelDir(name));
      expect(architecture).toBe(name.split('-')[0]);
      ref.prompts.forEach((prompt, i) => {
        const { diff, scale } = compare(logitsOf(model, prompt), logits[`logits.${i}`].dataSync());
        expect(scale).toBeGreaterThan(10);
        // PyTorch's own float32 logits are this far from float64 ones; ours are as close to PyTorch's.
        expect(diff).toBeLessThanOrEqual(RELATIVE_TOLERANCE * scale);
      });
      // All prompts in one batch (right-padded, through the KV cache) against one-by-one full passes.
      const out = generate(model, ref.prompts, { maxNewTokens: ref.steps, temperature: 0 });
      expect(out.tokens).toEqual(ref.greedy);
      out.cache.dispose();
      model.dispose();
      for (const t of Object.values(logits)) t.dispose();
    });
  }

  it('a bf16 checkpoint loads into bfloat16 parameters bit for bit', async () => {
    const dir = modelDir('llama-untied-bf16');
    const { model } = await loadHfModel(dir, { dtype: 'bfloat16' });
    const file = await SafetensorsFile.open(join(dir, 'model.safetensors'));
    const params = new Map(model.namedParameters());
    expect(params.get('head.weight')!.dtype).toBe('bfloat16');
    const source = await file.read('lm_head.weight');
    expect([...params.get('head.weight')!.rawDataSync()]).toEqual([...source.rawDataSync()]);
    source.dispose();
    await file.close();
    // Computing in bfloat16 stays near the float32 reference (a few bf16 steps of ~30).
    const ref = reference('llama-untied-bf16');
    const logits = (await loadSafetensors(join(FIXTURES, 'reference', 'llama-untied-bf16.safetensors')))
      .tensors;
    const { diff, scale } = compare(logitsOf(model, ref.prompts[0]), logits['logits.0'].dataSync());
    expect(diff).toBeLessThan(0.05 * scale);
    model.dispose();
  });

  it('float32 weights load into bfloat16 or float16 parameters as their rounding', async () => {
    const full = await loadHfModel(modelDir('qwen3'));
    for (const dtype of ['bfloat16', 'float16'] as const) {
      const { model } = await loadHfModel(modelDir('qwen3'), { dtype });
      const params = new Map(model.namedParameters());
      for (const [n, p] of full.model.namedParameters()) {
        const rounded = p.cast(dtype);
        expect(params.get(n)!.dtype).toBe(dtype);
        expect([...params.get(n)!.rawDataSync()], n).toEqual([...rounded.rawDataSync()]);
        rounded.dispose();
      }
      model.dispose();
    }
    full.model.dispose();
  });

  it('reads eos and bos ids from generation_config.json, and maxLength can be shortened', async () => {
    const loaded = await loadHfModel(modelDir('llama'), { maxLength: 64 });
    const config = JSON.parse(readFileSync(join(modelDir('llama'), 'config.json'), 'utf8'));
    expect(loaded.eosTokenIds).toEqual(config.eos_token_id);
    expect(loaded.eosTokenIds.length).toBe(2);
    expect(loaded.bosTokenId).toBe(config.bos_token_id);
    expect(loaded.model.config.maxLength).toBe(64);
    expect(loaded.model.config.ropeScaling).toEqual({
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxLength: 256,
    });
    const ref = reference('llama');
    const logits = (await loadSafetensors(join(FIXTURES, 'reference', 'llama.safetensors'))).tensors;
    const { diff, scale } = compare(logitsOf(loaded.model, ref.prompts[0]), logits['logits.0'].dataSync());
    expect(diff).toBeLessThanOrEqual(RELATIVE_TOLERANCE * scale);
    loaded.model.dispose();
  });

  it('a tied checkpoint that also holds lm_head.weight reads its head from the embedding, as transformers does', async () => {
    const dir = await copyOf('qwen2', 'tied-with-head');
    const path = join(dir, 'model.safetensors');
    const { tensors, metadata } = await loadSafetensors(path);
    const extra = tensor(new Float32Array(320 * 32).fill(1), { shape: [320, 32] });
    await writeSafetensors(
      path,
      [...Object.entries(tensors), ['lm_head.weight', extra] as [string, Tensor]].map(([name, t]) => ({
        name,
        dtype: t.dtype,
        shape: t.shape,
        data: () => t.rawData(),
      })),
      metadata,
    );
    const { model } = await loadHfModel(dir);
    const ref = reference('qwen2');
    const logits = (await loadSafetensors(join(FIXTURES, 'reference', 'qwen2.safetensors'))).tensors;
    const { diff, scale } = compare(logitsOf(model, ref.prompts[1]), logits['logits.1'].dataSync());
    expect(diff).toBeLessThanOrEqual(RELATIVE_TOLERANCE * scale);
    model.dispose();
  });
});

describe('a folder we cannot load is one error naming the culprit', () => {
  const cases: [string, string, (dir: string) => Promise<void>, RegExp][] = [
    [
      'no config.json',
      'qwen3',
      (dir) => rm(join(dir, 'config.json')),
      /is not a Hugging Face model folder: it has no config\.json/,
    ],
    [
      'an unknown architecture',
      'qwen3',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.architectures = ['MistralForCausalLM'];
          c.model_type = 'mistral';
        }),
      /config\.json: architecture "MistralForCausalLM" is not supported \(supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM\)/,
    ],
    [
      'another activation',
      'llama',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.hidden_act = 'gelu';
        }),
      /config\.json: an activation other than silu \("hidden_act": "gelu"\) is not supported/,
    ],
    [
      'YaRN scaling',
      'qwen2',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.rope_scaling = { rope_type: 'yarn', factor: 4 };
        }),
      /config\.json: "rope_scaling" type "yarn" is not supported/,
    ],
    [
      'sliding-window attention',
      'qwen2',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.use_sliding_window = true;
        }),
      /sliding-window attention \("use_sliding_window": true\) is not supported/,
    ],
    [
      'no weights',
      'qwen3',
      (dir) => rm(join(dir, 'model.safetensors')),
      /has neither model\.safetensors nor model\.safetensors\.index\.json/,
    ],
    [
      'a shape the config does not give',
      'llama',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.intermediate_size = 40;
        }),
      /model\.safetensors: tensor 'model\.layers\.\d\.mlp\.(gate_proj\.weight' has shape \[48, 32\], but config\.json gives \[40, 32\]|up_proj\.weight' has shape \[48, 32\], but config\.json gives \[40, 32\]|down_proj\.weight' has shape \[32, 48\], but config\.json gives \[32, 40\])/,
    ],
    [
      'a tensor the architecture has no place for',
      'llama',
      (dir) =>
        editJson(join(dir, 'config.json'), (c) => {
          c.architectures = ['Qwen3ForCausalLM'];
          c.model_type = 'qwen3';
        }),
      /missing 'model\.layers\.0\.self_attn\.q_norm\.weight', .* for a Qwen3 model/,
    ],
    [
      'a missing shard',
      'qwen2-sharded-f16',
      async (dir) => {
        await rm(join(dir, 'model-00003-of-00003.safetensors'));
        await editJson(join(dir, HF_WEIGHTS_INDEX_FILE), (index) => {
          const map = index.weight_map as Record<string, string>;
          for (const [k, v] of Object.entries(map)) if (v.startsWith('model-00003')) delete map[k];
        });
      },
      /missing 'model\.layers\.1\.[a-z_.]+weight', .*'lm_head\.weight' for a Qwen2 model/,
    ],
    [
      'an index that lists a tensor its file lacks',
      'qwen2-sharded-f16',
      (dir) =>
        editJson(join(dir, HF_WEIGHTS_INDEX_FILE), (index) => {
          (index.weight_map as Record<string, string>)['model.norm.weight'] =
            'model-00001-of-00003.safetensors';
        }),
      /model-00001-of-00003\.safetensors: the index lists 'model\.norm\.weight', which it does not hold/,
    ],
  ];
  for (const [what, name, breakIt, message] of cases) {
    it(what, async () => {
      const dir = await copyOf(name, what.replace(/\W+/g, '-'));
      await breakIt(dir);
      const before = memory();
      await expect(loadHfModel(dir)).rejects.toThrow(message);
      expect(memory().storages).toBe(before.storages);
    });
  }

  it('a tensor of unknown name', async () => {
    const dir = await copyOf('qwen3', 'unknown-tensor');
    const path = join(dir, 'model.safetensors');
    const { tensors, metadata } = await loadSafetensors(path);
    tensors['model.layers.0.self_attn.o_proj.bias'] = tensor(new Float32Array(32));
    tensors['model.visual.weight'] = tensor(new Float32Array(2));
    const sources = Object.entries(tensors).map(([n, t]) => ({
      name: n,
      dtype: t.dtype,
      shape: t.shape,
      data: () => t.rawData(),
    }));
    await writeSafetensors(path, sources, metadata);
    await expect(loadHfModel(dir)).rejects.toThrow(
      /model\.safetensors: (tensor 'model\.layers\.0\.self_attn\.o_proj\.bias' has no place in a Qwen3 model|unknown tensor 'model\.visual\.weight' \(not a parameter of a Qwen3 model)/,
    );
    await writeSafetensors(
      path,
      sources.filter((s) => s.name !== 'model.visual.weight'),
      metadata,
    );
    await expect(loadHfModel(dir)).rejects.toThrow(
      /tensor 'model\.layers\.0\.self_attn\.o_proj\.bias' has no place in a Qwen3 model \(Qwen3ForCausalLM\) as config\.json describes it/,
    );
  });
});

describe('saving in the Hugging Face layout', () => {
  for (const name of NAMES) {
    it(`${name}: load → save → load round trips every tensor bit for bit`, async () => {
      const config = JSON.parse(readFileSync(join(modelDir(name), 'config.json'), 'utf8'));
      const loaded = await loadHfModel(modelDir(name), { dtype: config.torch_dtype });
      const out = join(scratch, `saved-${name}`);
      const sharded = name.includes('sharded');
      await saveHfModel(out, loaded.model, {
        config: loaded.config,
        generationConfig: loaded.generationConfig,
        maxShardBytes: sharded ? 40_000 : undefined,
      });
      const files = await readdir(out);
      expect(files.includes(HF_WEIGHTS_INDEX_FILE)).toBe(sharded);
      expect(files.includes('model.safetensors')).toBe(!sharded);
      const original = await rawTensors(modelDir(name));
      const saved = await rawTensors(out);
      expect([...saved.keys()].sort()).toEqual([...original.keys()].sort());
      for (const [k, v] of original) expect(saved.get(k), k).toEqual(v);
      // Every key of the original config.json is kept with its value.
      const savedConfig = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
      expect(savedConfig).toMatchObject(config);
      const again = await loadHfModel(out);
      const ref = reference(name);
      const logits = (await loadSafetensors(join(FIXTURES, 'reference', `${name}.safetensors`))).tensors;
      const { diff, scale } = compare(logitsOf(again.model, ref.prompts[2]), logits['logits.2'].dataSync());
      expect(diff).toBeLessThanOrEqual(RELATIVE_TOLERANCE * scale);
      expect(again.eosTokenIds).toEqual(loaded.eosTokenIds);
      loaded.model.dispose();
      again.model.dispose();
    });
  }

  it('a float32 model saved as bfloat16 loads back as its weights rounded to bfloat16', async () => {
    const { model } = await loadHfModel(modelDir('qwen3'));
    const out = join(scratch, 'qwen3-as-bf16');
    await saveHfModel(out, model, { dtype: 'bfloat16' });
    const config = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
    expect(config.torch_dtype).toBe('bfloat16');
    const back = await loadHfModel(out, { dtype: 'bfloat16' });
    const params = new Map(back.model.namedParameters());
    for (const [n, p] of model.namedParameters()) {
      const rounded = p.cast('bfloat16');
      expect([...params.get(n)!.rawDataSync()], n).toEqual([...rounded.rawDataSync()]);
      rounded.dispose();
    }
    model.dispose();
    back.model.dispose();
  });

  it('a model of our own saves as the architecture of its options and loads back with the same logits', async () => {
    const cases = [
      [{}, 'LlamaForCausalLM'],
      [{ qkvBias: true, tiedEmbeddings: false }, 'Qwen2ForCausalLM'],
      [{ qkNorm: true, headDim: 12, kvHeads: 1 }, 'Qwen3ForCausalLM'],
    ] as const;
    for (const [extra, architecture] of cases) {
      const model = new TransformerLM({
        vocabSize: 50,
        dModel: 24,
        layers: 2,
        heads: 2,
        maxLength: 32,
        seed: 3,
        ...extra,
      });
      const out = join(scratch, `own-${architecture}`);
      await saveHfModel(out, model);
      const config = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
      expect(config.architectures).toEqual([architecture]);
      const back = await loadHfModel(out);
      const prompt = [1, 4, 9, 16, 25, 36, 49];
      expect([...logitsOf(back.model, prompt)]).toEqual([...logitsOf(model, prompt)]);
      model.dispose();
      back.model.dispose();
    }
  });

  it('saves a policy with a value head without it, and loads into one keeping its own', async () => {
    const shape = { vocabSize: 20, dModel: 8, layers: 1, heads: 2, maxLength: 8 };
    const critic = new TransformerLM({ ...shape, valueHead: true, seed: 3 });
    const out = join(scratch, 'critic');
    await saveHfModel(out, critic);
    const info = await readHfModelInfo(out);
    const back = new TransformerLM({ ...info.transformer, valueHead: true, seed: 9 });
    const fresh = new Map(back.namedParameters());
    const valueBefore = [...(fresh.get('valueHead.weight')!.dataSync() as Float32Array)];
    await loadHfWeights(back, out, info);
    const prompt = [1, 4, 9, 16];
    expect([...logitsOf(back, prompt)]).toEqual([...logitsOf(critic, prompt)]);
    expect([...(fresh.get('valueHead.weight')!.dataSync() as Float32Array)]).toEqual(valueBefore);
    critic.dispose();
    back.dispose();
  });

  it('refuses a model no architecture has, weights for a model of other arithmetic, and a folder holding other files', async () => {
    const shape = { vocabSize: 20, dModel: 8, layers: 1, heads: 2, maxLength: 8 };
    const copier = new TransformerLM({ ...shape, copyHead: true });
    await expect(saveHfModel(join(scratch, 'copier'), copier)).rejects.toThrow(
      'saveHfModel: the model has a copy head, which no supported architecture has',
    );
    copier.dispose();
    const plain = new TransformerLM(shape);
    await saveHfModel(join(scratch, 'base-10000'), plain);
    plain.dispose();
    const otherBase = new TransformerLM({ ...shape, ropeBase: 500 });
    await expect(loadHfWeights(otherBase, join(scratch, 'base-10000'))).rejects.toThrow(
      /config\.json: the model's ropeBase is 500, config\.json's 10000/,
    );
    otherBase.dispose();
    const model = new TransformerLM({ vocabSize: 20, dModel: 8, layers: 1, heads: 2, maxLength: 8 });
    const dir = join(scratch, 'occupied');
    await saveHfModel(dir, model);
    await writeFile(join(dir, 'notes.txt'), 'mine');
    await expect(saveHfModel(dir, model)).rejects.toThrow(
      /holds files that are not part of a Hugging Face model folder \(notes\.txt\); refusing to replace it/,
    );
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    model.dispose();
  });
});
