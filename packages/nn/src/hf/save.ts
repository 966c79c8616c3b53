/**
 * Saving a TransformerLM as a Hugging Face causal-LM folder that transformers (and loadHfModel) read:
 * config.json, generation_config.json, model.safetensors, or model-0000i-of-0000n.safetensors with
 * model.safetensors.index.json once the weights pass `maxShardBytes`, plus the caller's files (the tokenizer's).
 *
 * A tied model writes no lm_head.weight, as save_pretrained does; a value head is left out. Tensors are written one at a time (cast to
 * the dtype asked for one at a time too), into a temporary folder that is renamed into place, so the folder
 * appears complete or not at all.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tensor } from '@agent-r1/tensor';
import { pathExists, replaceFolderAtomically, writeFileAtomic } from '../io/atomic.js';
import { type SafetensorsSource, writeSafetensors } from '../io/safetensors.js';
import type { TransformerLM } from '../models/transformer-lm.js';
import { type HfConfigJson, hfConfigFor } from './config.js';
import { HF_CONFIG_FILE, HF_GENERATION_CONFIG_FILE, HF_WEIGHTS_FILE, HF_WEIGHTS_INDEX_FILE } from './load.js';
import { hfName } from './names.js';

export type HfSaveDType = 'float32' | 'bfloat16' | 'float16';

export interface SaveHfModelOptions {
  /** The weights' dtype in the files (default: the model's). */
  dtype?: HfSaveDType;
  /** A config.json to start from (HfModel.config of the loaded model): its keys that we do not set are kept. */
  config?: HfConfigJson;
  /** generation_config.json's contents (HfModel.generationConfig); none is written when absent. */
  generationConfig?: HfConfigJson | null;
  /** Largest weight file in bytes before the weights are sharded (default 5 GB, as save_pretrained). */
  maxShardBytes?: number;
  /** Further files by plain file name, e.g. tokenizer.json and tokenizer_config.json. */
  files?: Record<string, string | Uint8Array>;
}

const DEFAULT_SHARD_BYTES = 5_000_000_000;
const BYTES: Record<HfSaveDType, number> = { float32: 4, bfloat16: 2, float16: 2 };
/** Files a Hugging Face model folder may hold; a folder with anything else is not replaced. */
const HF_FOLDER_FILE =
  /^(config\.json|generation_config\.json|model\.safetensors|model-\d+-of-\d+\.safetensors|model\.safetensors\.index\.json|tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|vocab\.json|merges\.txt|added_tokens\.json|chat_template\.jinja)$/;

/**
 * The model's tensors in Hugging Face names, in parameter order (a tied model has no lm_head.weight). A
 * value head (PPO's critic on the policy's trunk) is left out: transformers has no place for it, and
 * the language model is complete without it.
 */
function hfTensors(model: TransformerLM): [string, Tensor][] {
  const out: [string, Tensor][] = [];
  for (const [ours, p] of model.namedParameters()) {
    if (ours.startsWith('valueHead.')) continue;
    const name = hfName(ours);
    if (name === null) throw new Error(`saveHfModel: parameter '${ours}' has no Hugging Face name`);
    out.push([name, p]);
  }
  return out;
}

/** Cuts the tensors into shards of at most `max` bytes (a bigger tensor gets a shard of its own), in order. */
function shards(tensors: [string, Tensor][], bytesPer: number, max: number): [string, Tensor][][] {
  const out: [string, Tensor][][] = [];
  let size = 0;
  for (const entry of tensors) {
    const bytes = entry[1].size * bytesPer;
    if (out.length === 0 || (size + bytes > max && out[out.length - 1].length > 0)) {
      out.push([]);
      size = 0;
    }
    out[out.length - 1].push(entry);
    size += bytes;
  }
  return out;
}

function source(name: string, t: Tensor, dtype: HfSaveDType): SafetensorsSource {
  return {
    name,
    dtype,
    shape: t.shape,
    async data() {
      if (t.dtype === dtype) return t.rawData();
      const cast = t.cast(dtype);
      try {
        return await cast.rawData();
      } finally {
        cast.dispose();
      }
    },
  };
}

/** Saves `model` as a Hugging Face folder `dir` (see the module comment), replacing one that is there. */
export async function saveHfModel(
  dir: string,
  model: TransformerLM,
  options: SaveHfModelOptions = {},
): Promise<void> {
  const dtype = options.dtype ?? (model.config.dtype as HfSaveDType);
  if (!(dtype in BYTES))
    throw new Error(`saveHfModel: weights can be saved as float32, bfloat16 or float16, not ${dtype}`);
  const max = options.maxShardBytes ?? DEFAULT_SHARD_BYTES;
  if (!(max > 0)) throw new Error(`saveHfModel: maxShardBytes must be positive, got ${max}`);
  const config = hfConfigFor(model.config, { base: options.config, torchDtype: dtype });
  const files = new Map<string, string | Uint8Array>();
  for (const [name, data] of Object.entries(options.files ?? {})) {
    if (name === '' || /[\\/]/.test(name) || name.startsWith('.') || !HF_FOLDER_FILE.test(name))
      throw new Error(`saveHfModel: files: '${name}' is not a file of a Hugging Face model folder`);
    if ([HF_CONFIG_FILE, HF_GENERATION_CONFIG_FILE].includes(name) || name.includes('safetensors'))
      throw new Error(`saveHfModel: files: '${name}' is written by saveHfModel itself`);
    files.set(name, data);
  }
  files.set(HF_CONFIG_FILE, `${JSON.stringify(config, null, 2)}\n`);
  if (options.generationConfig)
    files.set(HF_GENERATION_CONFIG_FILE, `${JSON.stringify(options.generationConfig, null, 2)}\n`);

  if (await pathExists(dir)) {
    const foreign = (await readdir(dir)).filter((e) => !HF_FOLDER_FILE.test(e));
    if (foreign.length)
      throw new Error(
        `saveHfModel: ${dir} holds files that are not part of a Hugging Face model folder (${foreign.join(', ')}); refusing to replace it`,
      );
  }
  const parts = shards(hfTensors(model), BYTES[dtype], max);
  await replaceFolderAtomically(dir, async (tmp) => {
    for (const [name, data] of files) await writeFileAtomic(join(tmp, name), data);
    const metadata = { format: 'pt' };
    if (parts.length === 1) {
      await writeSafetensors(
        join(tmp, HF_WEIGHTS_FILE),
        parts[0].map(([n, t]) => source(n, t, dtype)),
        metadata,
      );
    } else {
      const weightMap: Record<string, string> = {};
      let total = 0;
      for (const [i, part] of parts.entries()) {
        const file = `model-${String(i + 1).padStart(5, '0')}-of-${String(parts.length).padStart(5, '0')}.safetensors`;
        await writeSafetensors(
          join(tmp, file),
          part.map(([n, t]) => source(n, t, dtype)),
          metadata,
        );
        for (const [n, t] of part) {
          weightMap[n] = file;
          total += t.size * BYTES[dtype];
        }
      }
      const index = { metadata: { total_size: total }, weight_map: weightMap };
      await writeFileAtomic(join(tmp, HF_WEIGHTS_INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
    }
  });
}
