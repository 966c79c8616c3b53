/** Byte-level BPE tokenizer: training, encoding with special tokens, decoding, JSON save/load. */
export { BYTE_VOCAB } from './bytes.js';
export {
  GPT2_PATTERN,
  PRETOKENIZER_NAMES,
  type PretokenizerName,
  SPLIT_DIGITS_PUNCT_PATTERN,
  SPLIT_PUNCT_DIGITS3_PATTERN,
  pretokenize,
} from './pretokenize.js';
export { type TokenizerJSON, parseTokenizerJSON } from './serialize.js';
export { type EncodeOptions, Tokenizer, type TokenizerOptions, TokenStreamDecoder } from './tokenizer.js';
export { countPieces, learnMerges, type TrainBpeOptions, trainBpe } from './train.js';
export { Template as ChatTemplate, TemplateError } from './jinja.js';
export {
  type ChatMessage,
  type ChatTemplateOptions,
  HF_TOKENIZER_CONFIG_FILE,
  HF_TOKENIZER_FILE,
  type HfDecodeOptions,
  type HfEncodeOptions,
  HfTokenizer,
} from './hf-tokenizer.js';
