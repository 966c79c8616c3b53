/**
 * Parameter names: ours (TransformerLM's dotted paths) ↔ Hugging Face's (LlamaForCausalLM and its Qwen kin).
 * One table, read in both directions.
 */

/** [our name, Hugging Face's name]; `#` stands for the layer index. */
const TABLE: readonly (readonly [string, string])[] = [
  ['embed.weight', 'model.embed_tokens.weight'],
  ['blocks.#.attnNorm.weight', 'model.layers.#.input_layernorm.weight'],
  ['blocks.#.attn.q.weight', 'model.layers.#.self_attn.q_proj.weight'],
  ['blocks.#.attn.q.bias', 'model.layers.#.self_attn.q_proj.bias'],
  ['blocks.#.attn.k.weight', 'model.layers.#.self_attn.k_proj.weight'],
  ['blocks.#.attn.k.bias', 'model.layers.#.self_attn.k_proj.bias'],
  ['blocks.#.attn.v.weight', 'model.layers.#.self_attn.v_proj.weight'],
  ['blocks.#.attn.v.bias', 'model.layers.#.self_attn.v_proj.bias'],
  ['blocks.#.attn.o.weight', 'model.layers.#.self_attn.o_proj.weight'],
  ['blocks.#.attn.o.bias', 'model.layers.#.self_attn.o_proj.bias'],
  ['blocks.#.attn.qNorm.weight', 'model.layers.#.self_attn.q_norm.weight'],
  ['blocks.#.attn.kNorm.weight', 'model.layers.#.self_attn.k_norm.weight'],
  ['blocks.#.mlpNorm.weight', 'model.layers.#.post_attention_layernorm.weight'],
  ['blocks.#.mlp.gate.weight', 'model.layers.#.mlp.gate_proj.weight'],
  ['blocks.#.mlp.up.weight', 'model.layers.#.mlp.up_proj.weight'],
  ['blocks.#.mlp.down.weight', 'model.layers.#.mlp.down_proj.weight'],
  // Biases some configs of these architectures have (attention_bias, mlp_bias) and ours never do: named, so
  // that a checkpoint holding them is told it has no place here rather than that they are unknown.
  ['blocks.#.mlp.gate.bias', 'model.layers.#.mlp.gate_proj.bias'],
  ['blocks.#.mlp.up.bias', 'model.layers.#.mlp.up_proj.bias'],
  ['blocks.#.mlp.down.bias', 'model.layers.#.mlp.down_proj.bias'],
  ['finalNorm.weight', 'model.norm.weight'],
  ['head.weight', 'lm_head.weight'],
];

/** Buffers some checkpoints hold that carry nothing a loader needs (rotary frequencies are recomputed). */
const IGNORED = /^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const compile = (pattern: string) => new RegExp(`^${escapeRegExp(pattern).replace('#', '(\\d+)')}$`);
const OURS = TABLE.map(([ours, hf]) => [compile(ours), hf] as const);
const THEIRS = TABLE.map(([ours, hf]) => [compile(hf), ours] as const);

function translate(name: string, table: readonly (readonly [RegExp, string])[]): string | null {
  for (const [re, target] of table) {
    const m = re.exec(name);
    if (m) return m[1] === undefined ? target : target.replace('#', m[1]);
  }
  return null;
}

/** The Hugging Face name of one of our parameters, or null when it has none (a value or copy head). */
export function hfName(ours: string): string | null {
  return translate(ours, OURS);
}

/** Our name of a Hugging Face tensor, or null for a name outside the table. */
export function ourName(hf: string): string | null {
  return translate(hf, THEIRS);
}

/** Whether a Hugging Face tensor is a buffer to skip (not a parameter of any model). */
export function isIgnoredHfTensor(hf: string): boolean {
  return IGNORED.test(hf);
}
