/**
 * The pretrained model a run starts from (`model.from`: a Hugging Face folder) and the way back: the
 * tokenizer and vocabulary rows its task is built with, read from the folder or from a checkpoint that
 * such a run wrote (which keeps the tokenizer's files, so the agent loads without the original folder);
 * and a trained policy written as a Hugging Face folder again.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  HF_TOKENIZER_CONFIG_FILE,
  HF_TOKENIZER_FILE,
  type HfModelInfo,
  HfTokenizer,
  type TransformerLM,
  readHfModelInfo,
  saveHfModel,
} from '@agent-r1/nn';
import type { PretrainedVocabulary, TaskContext } from '../tasks/task.js';
import type { TrainConfig } from '../trainer/config.js';
import { readAgentDescription } from './agent-files.js';

/** The tokenizer and embedding rows of the Hugging Face folder `dir`. */
export async function pretrainedVocabulary(dir: string): Promise<PretrainedVocabulary> {
  const info = await readHfModelInfo(dir);
  return { source: dir, tokenizer: await HfTokenizer.load(dir), vocabSize: info.transformer.vocabSize };
}

/** The same, out of the checkpoint folder `folder` of a `model.from` run (its policy has `vocabSize` rows). */
export async function checkpointVocabulary(folder: string, vocabSize: number): Promise<PretrainedVocabulary> {
  return { source: folder, tokenizer: await HfTokenizer.load(folder), vocabSize };
}

/**
 * What the task of a policy checkpoint folder is built with: for a run from a pretrained model, the
 * tokenizer the checkpoint saved, so `eval`, `chat` and `loadAgent` need not find `model.from`'s folder;
 * nothing otherwise (or for a folder that saved no tokenizer).
 */
export async function checkpointTaskContext(config: TrainConfig, folder: string): Promise<TaskContext> {
  if (config.model.from === '') return {};
  const description = readAgentDescription(folder);
  if (!description || !existsSync(join(folder, HF_TOKENIZER_FILE))) return {};
  return { pretrained: await checkpointVocabulary(folder, description.model.vocabSize) };
}

/**
 * Writes `policy` as a Hugging Face folder `out`: `from`'s config.json keys and generation_config.json
 * kept, its tokenizer files copied as they are, the weights in Hugging Face names (a value head left out).
 */
export async function exportPretrainedPolicy(
  out: string,
  policy: TransformerLM,
  from: string,
  info: HfModelInfo,
): Promise<void> {
  const files: Record<string, Uint8Array> = {};
  for (const name of [HF_TOKENIZER_FILE, HF_TOKENIZER_CONFIG_FILE]) {
    const bytes = await readFile(join(from, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' && name === HF_TOKENIZER_CONFIG_FILE) return null;
      throw new Error(`${from}: cannot read ${name}: ${e.message}`);
    });
    if (bytes) files[name] = bytes;
  }
  await saveHfModel(out, policy, { config: info.config, generationConfig: info.generationConfig, files });
}
