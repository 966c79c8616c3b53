export { writeFileAtomic, writeFileAtomicSync, siblingTempPath } from './atomic.js';
export {
  serializeSafetensors,
  serializeSafetensorsAsync,
  parseSafetensors,
  saveSafetensors,
  loadSafetensors,
  type ParsedSafetensors,
  type ParseOptions,
  type SafetensorsMetadata,
} from './safetensors.js';
export {
  saveCheckpoint,
  loadCheckpoint,
  readCheckpointState,
  recoverCheckpoint,
  type Companion,
  loadStateDict,
  compareStateDict,
  stateDict,
  parameterNames,
  MODEL_FILE,
  OPTIMIZER_FILE,
  STATE_FILE,
  type SaveCheckpointOptions,
  type LoadCheckpointOptions,
  type LoadStateDictResult,
  type GeneratorState,
} from './checkpoint.js';
