/**
 * A preset's config with no file and no task registry: defaults ← preset ← overrides, validated. For a
 * task without options of its own (the toys), e.g. in a web page; `resolveConfig` (./config-resolve.ts)
 * is the full resolution, with files and the task's options.
 */
import { mergeTrees } from '../options/merge.js';
import { ConfigError, closest, show } from '../options/validate.js';
import { DEFAULT_CONFIG, type PartialTrainConfig, type TrainConfig } from './config-definition.js';
import { presets } from './config-presets.js';
import { validateConfig, validatePartialConfig } from './config-schema.js';

export function presetConfig(name: string, overrides: PartialTrainConfig = {}): TrainConfig {
  if (!Object.hasOwn(presets, name)) {
    const near = closest(name, Object.keys(presets));
    throw new ConfigError(`unknown preset ${show(name)}${near ? ` (did you mean ${show(near)}?)` : ''}`);
  }
  const layers = [validatePartialConfig(presets[name]), validatePartialConfig(overrides)];
  return validateConfig(mergeTrees(DEFAULT_CONFIG, ...layers) as TrainConfig);
}
