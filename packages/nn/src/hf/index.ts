/** Hugging Face causal-LM folders: config.json mapping, loading and saving (safetensors, sharded or not). */
export {
  HF_ARCHITECTURES,
  type HfArchitecture,
  type HfConfigJson,
  hfArchitectureFor,
  hfConfigFor,
  transformerConfigFromHf,
} from './config.js';
export { hfName, ourName } from './names.js';
export {
  HF_CONFIG_FILE,
  HF_GENERATION_CONFIG_FILE,
  HF_WEIGHTS_FILE,
  HF_WEIGHTS_INDEX_FILE,
  type HfModel,
  type HfModelInfo,
  type LoadHfModelOptions,
  loadHfModel,
  loadHfWeights,
  readHfModelInfo,
  readHfJson,
} from './load.js';
export { type HfSaveDType, type SaveHfModelOptions, saveHfModel } from './save.js';
