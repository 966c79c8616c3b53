/**
 * Hugging Face `config.json` ↔ TransformerConfig, for the architectures whose block ours is: Llama
 * (LlamaForCausalLM), Qwen2 (Qwen2ForCausalLM: biases on q, k and v) and Qwen3 (Qwen3ForCausalLM: RMS norms on
 * each head's queries and keys). Every key that changes the arithmetic is read, and a value we cannot compute
 * (another activation, sliding-window layers, YaRN scaling, biases on o_proj or the MLP, …) is an error that
 * names the key; keys that do not change it (initializer_range, use_cache, transformers_version, …) are kept
 * as they were when the model is saved again.
 */
import type { RopeScaling } from '../layers/rope.js';
import type { ResolvedConfig, TransformerConfig } from '../models/transformer-lm.js';

export const HF_ARCHITECTURES = {
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
} as const;

/** A model_type we read and write. */
export type HfArchitecture = keyof typeof HF_ARCHITECTURES;

export type HfConfigJson = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The architecture a config.json describes; an error names the file and what it holds instead. */
export function hfArchitectureOf(json: HfConfigJson, source: string): HfArchitecture {
  const byClass = new Map(
    Object.entries(HF_ARCHITECTURES).map(([k, v]) => [v as string, k as HfArchitecture]),
  );
  const known = Object.values(HF_ARCHITECTURES).join(', ');
  const classes = json.architectures;
  if (
    classes !== undefined &&
    (!Array.isArray(classes) || classes.length !== 1 || typeof classes[0] !== 'string')
  )
    throw new Error(`${source}: "architectures" must list one class name, got ${JSON.stringify(classes)}`);
  const type = json.model_type;
  if (classes !== undefined) {
    const arch = byClass.get(classes[0] as string);
    if (!arch)
      throw new Error(
        `${source}: architecture ${JSON.stringify(classes[0])} is not supported (supported: ${known})`,
      );
    if (type !== undefined && type !== arch)
      throw new Error(
        `${source}: "model_type" ${JSON.stringify(type)} does not match architecture ${classes[0]}`,
      );
    return arch;
  }
  if (typeof type === 'string' && type in HF_ARCHITECTURES) return type as HfArchitecture;
  throw new Error(
    `${source}: model_type ${JSON.stringify(type)} is not supported and no "architectures" is given (supported: ${known})`,
  );
}

export interface FromHfOptions {
  /** Longest sequence (default: max_position_embeddings). Rotary tables and default caches are this long. */
  maxLength?: number;
}

/** The TransformerConfig of a config.json (no dtype, device or seed: the caller adds them). */
export function transformerConfigFromHf(
  json: HfConfigJson,
  source: string,
  options: FromHfOptions = {},
): { architecture: HfArchitecture; config: TransformerConfig } {
  const architecture = hfArchitectureOf(json, source);
  const bad = (key: string, rule: string) =>
    new Error(`${source}: "${key}" ${rule}, got ${JSON.stringify(json[key])}`);
  const int = (key: string, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (!Number.isInteger(v) || (v as number) <= 0) throw bad(key, 'must be a positive integer');
    return v as number;
  };
  const num = (key: string, fallback: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !(v > 0)) throw bad(key, 'must be a positive number');
    return v;
  };
  const unsupported = (key: string, why: string) =>
    new Error(`${source}: ${why} ("${key}": ${JSON.stringify(json[key])}) is not supported`);

  const act = json.hidden_act ?? 'silu';
  if (act !== 'silu') throw unsupported('hidden_act', 'an activation other than silu');
  if (json.mlp_bias === true) throw unsupported('mlp_bias', 'biases on the MLP');
  if (json.attention_bias === true)
    throw unsupported(
      'attention_bias',
      architecture === 'qwen2'
        ? 'attention_bias on Qwen2'
        : 'biases on every attention projection (o_proj too)',
    );
  if (json.use_sliding_window === true) throw unsupported('use_sliding_window', 'sliding-window attention');
  const layerTypes = json.layer_types;
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== 'full_attention'))
    throw unsupported('layer_types', 'layers other than full_attention');
  if (json.partial_rotary_factor !== undefined && json.partial_rotary_factor !== 1)
    throw unsupported('partial_rotary_factor', 'rotating part of each head');

  const heads = int('num_attention_heads');
  const dModel = int('hidden_size');
  // Qwen3Config's head_dim defaults to 128; Llama's and Qwen2's to hidden_size / heads.
  const headDim = json.head_dim ?? (architecture === 'qwen3' ? 128 : undefined);
  if (
    headDim !== undefined &&
    headDim !== null &&
    (!Number.isInteger(headDim) || (headDim as number) % 2 !== 0)
  )
    throw bad('head_dim', 'must be a positive even integer');
  if ((headDim === undefined || headDim === null) && dModel % heads !== 0)
    throw bad(
      'hidden_size',
      `must be a multiple of num_attention_heads (${heads}) when head_dim is not given`,
    );
  const tied = json.tie_word_embeddings ?? false;
  if (typeof tied !== 'boolean') throw bad('tie_word_embeddings', 'must be true or false');
  const { ropeBase, ropeScaling } = ropeOf(json, source);
  const config: TransformerConfig = {
    vocabSize: int('vocab_size'),
    dModel,
    layers: int('num_hidden_layers'),
    heads,
    kvHeads: int('num_key_value_heads', heads),
    ffnHidden: int('intermediate_size'),
    maxLength: options.maxLength ?? int('max_position_embeddings'),
    tiedEmbeddings: tied,
    activation: 'swiglu',
    norm: 'rms',
    normEps: num('rms_norm_eps', 1e-6),
    ropeBase,
    ropeScaling,
    headDim: (headDim as number | undefined | null) ?? dModel / heads,
    qkvBias: architecture === 'qwen2',
    qkNorm: architecture === 'qwen3',
  };
  if (config.heads % config.kvHeads! !== 0)
    throw bad('num_key_value_heads', `must divide num_attention_heads (${heads})`);
  return { architecture, config };
}

/** rope_theta and rope_scaling (or, in newer configs, rope_parameters holding both). */
function ropeOf(json: HfConfigJson, source: string): { ropeBase: number; ropeScaling: RopeScaling | null } {
  const params = isObject(json.rope_parameters) ? json.rope_parameters : null;
  const key = params ? 'rope_parameters' : 'rope_scaling';
  const theta = params?.rope_theta ?? json.rope_theta ?? 10000;
  if (typeof theta !== 'number' || !(theta > 0))
    throw new Error(`${source}: "rope_theta" must be a positive number, got ${JSON.stringify(theta)}`);
  const s = params ?? json.rope_scaling;
  if (s === undefined || s === null) return { ropeBase: theta, ropeScaling: null };
  if (!isObject(s))
    throw new Error(`${source}: "${key}" must be an object or null, got ${JSON.stringify(s)}`);
  const type = s.rope_type ?? s.type ?? 'default';
  const field = (name: string): number => {
    const v = s[name];
    if (typeof v !== 'number' || !(v > 0))
      throw new Error(`${source}: "${key}.${name}" must be a positive number, got ${JSON.stringify(v)}`);
    return v;
  };
  if (type === 'default') return { ropeBase: theta, ropeScaling: null };
  if (type === 'linear') return { ropeBase: theta, ropeScaling: { type: 'linear', factor: field('factor') } };
  if (type === 'llama3')
    return {
      ropeBase: theta,
      ropeScaling: {
        type: 'llama3',
        factor: field('factor'),
        lowFreqFactor: field('low_freq_factor'),
        highFreqFactor: field('high_freq_factor'),
        originalMaxLength: field('original_max_position_embeddings'),
      },
    };
  throw new Error(
    `${source}: "${key}" type ${JSON.stringify(type)} is not supported (supported: default, linear, llama3)`,
  );
}

/** The architecture whose block a config is: q/k norms make it Qwen3, q/k/v biases Qwen2, neither Llama. */
export function hfArchitectureFor(c: ResolvedConfig): HfArchitecture {
  const no = (why: string) =>
    new Error(`saveHfModel: the model has ${why}, which no supported architecture has`);
  if (c.activation !== 'swiglu') throw no(`a ${c.activation} MLP`);
  if (c.norm !== 'rms') throw no('LayerNorm');
  if (c.copyHead) throw no('a copy head');
  if (c.qkNorm && c.qkvBias) throw no('both q/k norms and q/k/v biases');
  return c.qkNorm ? 'qwen3' : c.qkvBias ? 'qwen2' : 'llama';
}

/**
 * The config.json of a model: `base` (the config it was loaded from, whose other keys are kept) with every
 * key that describes the arithmetic set from `c`.
 */
export function hfConfigFor(
  c: ResolvedConfig,
  options: { base?: HfConfigJson; torchDtype: string },
): HfConfigJson {
  const architecture = hfArchitectureFor(c);
  const out: HfConfigJson = { ...(options.base ?? {}) };
  // Newer configs hold rope_theta inside rope_parameters; we write the older, widely read pair.
  delete out.rope_parameters;
  delete out.dtype;
  const scaling = c.ropeScaling;
  Object.assign(out, {
    architectures: [HF_ARCHITECTURES[architecture]],
    model_type: architecture,
    vocab_size: c.vocabSize,
    hidden_size: c.dModel,
    intermediate_size: c.ffnHidden,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.headDim,
    hidden_act: 'silu',
    // A model loaded with a shorter maxLength than it was trained for still describes its training length.
    max_position_embeddings: options.base?.max_position_embeddings ?? c.maxLength,
    rms_norm_eps: c.normEps,
    rope_theta: c.ropeBase,
    rope_scaling:
      scaling === null
        ? null
        : scaling.type === 'linear'
          ? { rope_type: 'linear', factor: scaling.factor }
          : {
              rope_type: 'llama3',
              factor: scaling.factor,
              low_freq_factor: scaling.lowFreqFactor,
              high_freq_factor: scaling.highFreqFactor,
              original_max_position_embeddings: scaling.originalMaxLength,
            },
    tie_word_embeddings: c.tiedEmbeddings,
    torch_dtype: options.torchDtype,
  });
  if (architecture !== 'qwen2') out.attention_bias = false;
  if (architecture === 'llama') out.mlp_bias = false;
  else out.use_sliding_window = false;
  return out;
}
