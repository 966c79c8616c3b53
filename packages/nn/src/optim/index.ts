export {
  Optimizer,
  type BaseHyper,
  type GroupState,
  type OptimizerState,
  type ParamGroup,
  type ParamGroupSpec,
  type ParamNames,
} from './optimizer.js';
export { AdamW, type AdamWOptions, type AdamWHyperParams, type AdamWParamGroup } from './adamw.js';
export { SGD, type SGDOptions, type SGDHyperParams, type SGDParamGroup } from './sgd.js';
export { clipGradNorm, clipGradNormAsync, type ClipGradNormOptions } from './clip.js';
export {
  constant,
  warmupCosine,
  warmupLinear,
  type LrSchedule,
  type WarmupOptions,
  type DecayOptions,
} from './schedule.js';
export { accumulateGradients, type AccumulateOptions } from './accumulate.js';
export { WeightAverage, type WeightAverageState } from './weight-average.js';
