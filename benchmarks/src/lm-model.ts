/** The LM benchmarks' model (lm.ts, decode.ts): 354,624 parameters, the shape of the issue's comparisons. */
import type { TransformerConfig } from '@agent-r1/nn';

export const LM_CONFIG: TransformerConfig = {
  vocabSize: 4096,
  dModel: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  maxLength: 512,
  activation: 'swiglu',
  norm: 'rms',
  tiedEmbeddings: true,
  seed: 0,
};
