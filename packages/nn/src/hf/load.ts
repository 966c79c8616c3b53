/**
 * Loading a Hugging Face causal-LM folder (config.json, model.safetensors or model-*.safetensors with
 * model.safetensors.index.json, generation_config.json) into a TransformerLM.
 *
 * Every tensor name, shape and dtype of every file is checked against the model the config describes before
 * any weight is read, so a bad folder fails in one error that names the file and the tensor. The weights are
 * then read one tensor at a time and copied into the model's parameters (converted to its dtype), so loading
 * needs the model plus one tensor of memory, never the checkpoint twice.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type FloatDType, noGrad, type Tensor } from '@agent-r1/tensor';
import { SafetensorsFile } from '../io/safetensors.js';
import { TransformerLM, type TransformerConfig } from '../models/transformer-lm.js';
import {
  type HfArchitecture,
  type HfConfigJson,
  HF_ARCHITECTURES,
  transformerConfigFromHf,
} from './config.js';
import { hfName, isIgnoredHfTensor, ourName } from './names.js';

export const HF_CONFIG_FILE = 'config.json';
export const HF_GENERATION_CONFIG_FILE = 'generation_config.json';
export const HF_WEIGHTS_FILE = 'model.safetensors';
export const HF_WEIGHTS_INDEX_FILE = 'model.safetensors.index.json';

export interface LoadHfModelOptions {
  /** The parameters' dtype (default float32); the file's bf16, f16 or f32 weights are converted to it. */
  dtype?: FloatDType;
  device?: string;
  /**
   * Longest sequence (default: config.json's max_position_embeddings). It sizes the rotary tables and the
   * KV cache that `generate` allocates by default, so a model trained on 32k positions is best loaded with
   * the length its tasks need.
   */
  maxLength?: number;
}

export interface HfModel extends Omit<HfModelInfo, 'transformer'> {
  model: TransformerLM;
}

/** Reads a JSON file of the folder; null when it does not exist and `optional`. */
export async function readHfJson(dir: string, name: string, optional: true): Promise<HfConfigJson | null>;
export async function readHfJson(dir: string, name: string, optional?: false): Promise<HfConfigJson>;
export async function readHfJson(dir: string, name: string, optional = false): Promise<HfConfigJson | null> {
  const path = join(dir, name);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (optional) return null;
      throw new Error(`${dir} is not a Hugging Face model folder: it has no ${name}`, { cause: err });
    }
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error(`${path}: must hold a JSON object`);
  return json as HfConfigJson;
}

/** The weight files of a folder, each with the tensors the index says it holds (null: no index). */
async function weightFiles(dir: string): Promise<Map<string, Set<string> | null>> {
  const index = await readHfJson(dir, HF_WEIGHTS_INDEX_FILE, true);
  if (index === null) {
    try {
      await stat(join(dir, HF_WEIGHTS_FILE));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error(
          `${dir} has neither ${HF_WEIGHTS_FILE} nor ${HF_WEIGHTS_INDEX_FILE} (only safetensors weights are read; a pytorch_model.bin must be converted first)`,
          { cause: err },
        );
      throw err;
    }
    return new Map([[HF_WEIGHTS_FILE, null]]);
  }
  const where = join(dir, HF_WEIGHTS_INDEX_FILE);
  const map = index.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new Error(`${where}: "weight_map" must be an object of tensor name → file name`);
  const files = new Map<string, Set<string>>();
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || file === '' || /[\\/]/.test(file) || file.startsWith('.'))
      throw new Error(
        `${where}: tensor '${name}' maps to ${JSON.stringify(file)}, not a file name of the folder`,
      );
    if (!files.has(file)) files.set(file, new Set());
    files.get(file)!.add(name);
  }
  if (files.size === 0) throw new Error(`${where}: "weight_map" lists no tensor`);
  return files;
}

const FLOAT_FILE_DTYPES = new Set(['F32', 'F16', 'BF16', 'F64']);
const ARCH_NAMES: Record<HfArchitecture, string> = { llama: 'Llama', qwen2: 'Qwen2', qwen3: 'Qwen3' };

/** What a folder's JSON files say of its model, before any weight is read (`readHfModelInfo`). */
export interface HfModelInfo {
  architecture: HfArchitecture;
  /** The TransformerConfig that config.json describes (float32, no device). */
  transformer: TransformerConfig;
  /** config.json as read; saveHfModel keeps the keys it does not set. */
  config: HfConfigJson;
  /** generation_config.json as read, or null when the folder has none. */
  generationConfig: HfConfigJson | null;
  /** generation_config.json's eos_token_id (one or a list), else config.json's; empty when neither gives one. */
  eosTokenIds: number[];
  bosTokenId: number | null;
}

/** Reads config.json and generation_config.json of `dir`: the model's architecture, checked, and its tokens. */
export async function readHfModelInfo(
  dir: string,
  options: Pick<LoadHfModelOptions, 'maxLength'> = {},
): Promise<HfModelInfo> {
  const json = await readHfJson(dir, HF_CONFIG_FILE);
  const { architecture, config } = transformerConfigFromHf(json, join(dir, HF_CONFIG_FILE), {
    maxLength: options.maxLength,
  });
  const generationConfig = await readHfJson(dir, HF_GENERATION_CONFIG_FILE, true);
  return {
    architecture,
    transformer: config,
    config: json,
    generationConfig,
    eosTokenIds: tokenIds(generationConfig?.eos_token_id ?? json.eos_token_id, 'eos_token_id', dir),
    bosTokenId: tokenIds(generationConfig?.bos_token_id ?? json.bos_token_id, 'bos_token_id', dir)[0] ?? null,
  };
}

/**
 * Loads a Hugging Face causal-LM folder into a TransformerLM (see the module comment). Throws, naming the
 * file and the key or tensor, on an unsupported architecture or setting, a tensor the model has no place
 * for, a missing one, or one of the wrong shape; nothing stays allocated after a failure.
 */
export async function loadHfModel(dir: string, options: LoadHfModelOptions = {}): Promise<HfModel> {
  const info = await readHfModelInfo(dir, options);
  const model = new TransformerLM({
    ...info.transformer,
    dtype: options.dtype ?? 'float32',
    device: options.device,
  });
  try {
    await loadHfWeights(model, dir, info);
  } catch (err) {
    model.dispose();
    throw err;
  }
  const { transformer: _, ...rest } = info;
  return { model, ...rest };
}

/**
 * Reads the weights of the Hugging Face folder `dir` into `model` (built from the same config.json, e.g.
 * with `readHfModelInfo(dir).transformer`), tensor by tensor, converted to the parameters' dtype. A value
 * head (PPO's critic), which no Hugging Face folder holds, keeps its own initialisation; every other
 * parameter must be in the files with its shape. `info` saves reading config.json again.
 */
export async function loadHfWeights(model: TransformerLM, dir: string, info?: HfModelInfo): Promise<void> {
  const { architecture, transformer } = info ?? (await readHfModelInfo(dir));
  checkSameArithmetic(model, transformer, join(dir, HF_CONFIG_FILE));
  const files = await weightFiles(dir);
  const opened: SafetensorsFile[] = [];
  try {
    for (const file of files.keys()) opened.push(await SafetensorsFile.open(join(dir, file)));
    const params = new Map([...model.namedParameters()].filter(([name]) => !name.startsWith(VALUE_HEAD)));
    const plan = planLoad(opened, [...files.values()], params, architecture, transformer.tiedEmbeddings!);
    for (const { file, name, param } of plan) {
      const t = await file.read(name, { device: param.device });
      try {
        noGrad(() => param.copy_(t));
      } finally {
        t.dispose();
      }
    }
  } finally {
    for (const f of opened) await f.close();
  }
}

/** The prefix of a value head's parameters, which Hugging Face folders never hold. */
const VALUE_HEAD = 'valueHead.';

/** Settings that change a model's arithmetic without changing a tensor's shape (shapes are checked per tensor). */
const ARITHMETIC_KEYS = [
  'activation',
  'norm',
  'normEps',
  'ropeBase',
  'ropeScaling',
  'qkvBias',
  'qkNorm',
] as const;

/** Weights go only into a model that computes what config.json describes; an error names the first setting that differs. */
function checkSameArithmetic(model: TransformerLM, wanted: TransformerConfig, source: string): void {
  for (const key of ARITHMETIC_KEYS) {
    const ours = JSON.stringify(model.config[key] ?? null);
    const theirs = JSON.stringify(wanted[key] ?? null);
    if (ours !== theirs)
      throw new Error(
        `${source}: the model's ${key} is ${ours}, config.json's ${theirs}: build the model from readHfModelInfo(dir).transformer`,
      );
  }
}

interface LoadStep {
  file: SafetensorsFile;
  name: string;
  param: Tensor;
}

/** Matches every tensor of the files to a parameter, checking names, shapes and dtypes; one error at most. */
function planLoad(
  files: SafetensorsFile[],
  indexed: (Set<string> | null)[],
  params: Map<string, Tensor>,
  architecture: HfArchitecture,
  tied: boolean,
): LoadStep[] {
  const steps: LoadStep[] = [];
  const seen = new Map<string, string>();
  const kind = `a ${ARCH_NAMES[architecture]} model (${HF_ARCHITECTURES[architecture]})`;
  files.forEach((file, i) => {
    const listed = indexed[i];
    if (listed) {
      const absent = [...listed].filter((n) => !file.has(n));
      if (absent.length)
        throw new Error(
          `${file.path}: the index lists ${absent.map((n) => `'${n}'`).join(', ')}, which it does not hold`,
        );
    }
    for (const name of file.names) {
      if (listed && !listed.has(name))
        throw new Error(`${file.path}: tensor '${name}' is not in ${HF_WEIGHTS_INDEX_FILE}`);
      if (isIgnoredHfTensor(name)) continue;
      // A tied model reads its head from the embedding, as transformers does, whatever lm_head holds.
      if (tied && name === 'lm_head.weight') continue;
      const ours = ourName(name);
      const param = ours === null ? undefined : params.get(ours);
      if (!param)
        throw new Error(
          ours === null
            ? `${file.path}: unknown tensor '${name}' (not a parameter of ${kind})`
            : `${file.path}: tensor '${name}' has no place in ${kind} as config.json describes it`,
        );
      const before = seen.get(name);
      if (before) throw new Error(`${file.path}: tensor '${name}' is also in ${before}`);
      seen.set(name, file.path);
      const info = file.info(name);
      if (!FLOAT_FILE_DTYPES.has(info.dtype))
        throw new Error(
          `${file.path}: tensor '${name}' is ${info.dtype}; weights must be F32, F16, BF16 or F64`,
        );
      if (info.shape.length !== param.shape.length || info.shape.some((d, j) => d !== param.shape[j]))
        throw new Error(
          `${file.path}: tensor '${name}' has shape [${info.shape.join(', ')}], but config.json gives [${param.shape.join(', ')}]`,
        );
      steps.push({ file, name, param });
    }
  });
  const loaded = new Set(steps.map((s) => s.param));
  const missing = [...params].filter(([, p]) => !loaded.has(p)).map(([n]) => n);
  if (missing.length) {
    const names = missing.map((n) => `'${hfName(n) ?? n}'`).join(', ');
    throw new Error(`${files.map((f) => f.path).join(', ')}: missing ${names} for ${kind}`);
  }
  return steps;
}

/** A token id or list of them from a config; an error names the key and the folder. */
function tokenIds(v: unknown, key: string, dir: string): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((id) => Number.isInteger(id) && id >= 0))
    throw new Error(`${dir}: "${key}" must be a token id or a list of them, got ${JSON.stringify(v)}`);
  return list as number[];
}
