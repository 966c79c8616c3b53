/**
 * Reading a Hugging Face `tokenizer.json` of a byte-level BPE tokenizer (GPT-2, Llama 3, Qwen2/2.5/3 and
 * their kin) into the pieces HfTokenizer runs: normalizer, pre-tokenizer steps, vocabulary and merges, added
 * tokens, post-processor template. Anything else (WordPiece, Unigram, Metaspace, byte fallback, a
 * post-processor other than ByteLevel or TemplateProcessing, …) is an error naming the field and its value.
 */
import { BYTE_TO_CHAR } from './bytes.js';
import { hfPattern } from './hf-regex.js';

export type Normalization = 'NFC' | 'NFD' | 'NFKC' | 'NFKD';

export type PreTokenizeStep =
  | { kind: 'split'; pattern: RegExp }
  | { kind: 'byteLevel'; addPrefixSpace: boolean; useRegex: boolean };

export interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  lstrip: boolean;
  rstrip: boolean;
}

/** What `addSpecialTokens` puts around the text: ids before and after (TemplateProcessing's single). */
export interface Template {
  before: number[];
  after: number[];
}

export interface HfTokenizerSpec {
  normalizers: Normalization[];
  preTokenize: PreTokenizeStep[];
  vocab: Map<string, number>;
  merges: [string, string][];
  ignoreMerges: boolean;
  added: AddedToken[];
  template: Template;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

/** Parses a tokenizer.json (already JSON.parse'd); `source` names it in errors. */
export function parseHfTokenizerJson(json: unknown, source: string): HfTokenizerSpec {
  const fail = (field: string, why: string): never => {
    throw new Error(`${source}: ${field} ${why}`);
  };
  if (!isObject(json)) return fail('the file', 'must hold a JSON object');
  const model = json.model;
  if (!isObject(model)) return fail('"model"', 'must be an object');
  if (model.type !== 'BPE')
    fail('"model.type"', `is ${show(model.type)}; only byte-level BPE tokenizers are supported`);
  if (model.dropout !== undefined && model.dropout !== null && model.dropout !== 0)
    fail('"model.dropout"', `is ${show(model.dropout)}; BPE dropout is not supported`);
  if (model.byte_fallback === true) fail('"model.byte_fallback"', 'is true, which is not supported');
  for (const key of ['continuing_subword_prefix', 'end_of_word_suffix'] as const)
    if (model[key] !== undefined && model[key] !== null && model[key] !== '')
      fail(`"model.${key}"`, `is ${show(model[key])}, which byte-level BPE does not use (not supported)`);

  const vocab = new Map<string, number>();
  if (!isObject(model.vocab)) fail('"model.vocab"', 'must be an object of token → id');
  for (const [token, id] of Object.entries(model.vocab as Record<string, unknown>)) {
    if (!Number.isInteger(id) || (id as number) < 0)
      fail(`"model.vocab"`, `gives ${show(token)} the id ${show(id)}, not a whole number >= 0`);
    vocab.set(token, id as number);
  }
  const missing = BYTE_TO_CHAR.findIndex((ch) => !vocab.has(ch));
  if (missing >= 0)
    fail(
      '"model.vocab"',
      `has no token for the byte ${missing} (${show(BYTE_TO_CHAR[missing])}): not a byte-level vocabulary`,
    );
  if (!Array.isArray(model.merges)) fail('"model.merges"', 'must be an array');
  const merges = (model.merges as unknown[]).map((m, r): [string, string] => {
    const pair =
      typeof m === 'string' ? (m.split(' ') as unknown[]) : Array.isArray(m) ? (m as unknown[]) : [];
    if (pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string')
      fail(`"model.merges[${r}]"`, `is ${show(m)}, not a pair of tokens ("a b" or ["a", "b"])`);
    const [a, b] = pair as [string, string];
    for (const t of [a, b, a + b])
      if (!vocab.has(t))
        fail(`"model.merges[${r}]"`, `(${show(m)}) needs ${show(t)}, which the vocabulary lacks`);
    return [a, b];
  });
  const ignoreMerges = model.ignore_merges === true;

  const added: AddedToken[] = [];
  const addedList = json.added_tokens ?? [];
  if (!Array.isArray(addedList)) fail('"added_tokens"', 'must be an array');
  for (const [i, t] of (addedList as unknown[]).entries()) {
    const where = `"added_tokens[${i}]"`;
    if (!isObject(t)) return fail(where, 'must be an object');
    if (!Number.isInteger(t.id) || (t.id as number) < 0) fail(`${where}.id`, `is ${show(t.id)}`);
    if (typeof t.content !== 'string' || t.content === '') fail(`${where}.content`, `is ${show(t.content)}`);
    if (t.single_word === true) fail(`${where}.single_word`, 'is true, which is not supported');
    const inVocab = vocab.get(t.content as string);
    if (inVocab !== undefined && inVocab !== t.id)
      fail(where, `gives ${show(t.content)} the id ${t.id}, but the vocabulary gives it ${inVocab}`);
    added.push({
      id: t.id as number,
      content: t.content as string,
      special: t.special === true,
      lstrip: t.lstrip === true,
      rstrip: t.rstrip === true,
    });
  }

  checkDecoder(json.decoder, source);
  return {
    normalizers: normalizersOf(json.normalizer, source),
    preTokenize: preTokenizersOf(json.pre_tokenizer, source),
    vocab,
    merges,
    ignoreMerges,
    added,
    template: templateOf(json.post_processor, source, added, vocab),
  };
}

function normalizersOf(n: unknown, source: string): Normalization[] {
  if (n === null || n === undefined) return [];
  if (!isObject(n)) throw new Error(`${source}: "normalizer" must be an object or null, got ${show(n)}`);
  if (n.type === 'Sequence') {
    if (!Array.isArray(n.normalizers))
      throw new Error(`${source}: "normalizer.normalizers" must be an array`);
    return n.normalizers.flatMap((m) => normalizersOf(m, source));
  }
  if (n.type === 'NFC' || n.type === 'NFD' || n.type === 'NFKC' || n.type === 'NFKD') return [n.type];
  throw new Error(
    `${source}: "normalizer" type ${show(n.type)} is not supported (supported: NFC, NFD, NFKC, NFKD, Sequence)`,
  );
}

function preTokenizersOf(p: unknown, source: string): PreTokenizeStep[] {
  if (p === null || p === undefined) return [];
  if (!isObject(p)) throw new Error(`${source}: "pre_tokenizer" must be an object or null, got ${show(p)}`);
  if (p.type === 'Sequence') {
    if (!Array.isArray(p.pretokenizers))
      throw new Error(`${source}: "pre_tokenizer.pretokenizers" must be an array`);
    return p.pretokenizers.flatMap((q) => preTokenizersOf(q, source));
  }
  if (p.type === 'ByteLevel')
    return [
      { kind: 'byteLevel', addPrefixSpace: p.add_prefix_space === true, useRegex: p.use_regex !== false },
    ];
  if (p.type === 'Split') {
    const behavior = p.behavior ?? 'Isolated';
    if (behavior !== 'Isolated' || p.invert === true)
      throw new Error(
        `${source}: a Split pre-tokenizer with behavior ${show(behavior)}${p.invert === true ? ' and invert' : ''} is not supported (only Isolated)`,
      );
    const pattern = p.pattern;
    if (isObject(pattern) && typeof pattern.Regex === 'string')
      return [{ kind: 'split', pattern: hfPattern(pattern.Regex, `${source}: "pre_tokenizer"`) }];
    if (isObject(pattern) && typeof pattern.String === 'string')
      return [{ kind: 'split', pattern: new RegExp(escapeRegExp(pattern.String), 'gu') }];
    throw new Error(`${source}: a Split pre-tokenizer's "pattern" must be {"Regex": …} or {"String": …}`);
  }
  throw new Error(
    `${source}: "pre_tokenizer" type ${show(p.type)} is not supported (supported: ByteLevel, Split, Sequence)`,
  );
}

/** Decoding is byte-level (tokens' characters back to bytes, then UTF-8); nothing else is supported. */
function checkDecoder(d: unknown, source: string): void {
  if (isObject(d) && d.type === 'ByteLevel') return;
  if (isObject(d) && d.type === 'Sequence' && Array.isArray(d.decoders) && d.decoders.length > 0) {
    for (const e of d.decoders) checkDecoder(e, source);
    return;
  }
  throw new Error(`${source}: "decoder" ${show(d)} is not supported (only ByteLevel)`);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function templateOf(p: unknown, source: string, added: AddedToken[], vocab: Map<string, number>): Template {
  const none: Template = { before: [], after: [] };
  if (p === null || p === undefined) return none;
  if (!isObject(p)) throw new Error(`${source}: "post_processor" must be an object or null`);
  if (p.type === 'ByteLevel') return none;
  if (p.type === 'Sequence') {
    if (!Array.isArray(p.processors))
      throw new Error(`${source}: "post_processor.processors" must be an array`);
    const parts = p.processors.map((q) => templateOf(q, source, added, vocab));
    return { before: parts.flatMap((t) => t.before), after: parts.flatMap((t) => t.after) };
  }
  if (p.type !== 'TemplateProcessing')
    throw new Error(
      `${source}: "post_processor" type ${show(p.type)} is not supported (supported: ByteLevel, TemplateProcessing, Sequence)`,
    );
  const specials = isObject(p.special_tokens) ? p.special_tokens : {};
  if (!Array.isArray(p.single)) throw new Error(`${source}: "post_processor.single" must be an array`);
  const out: Template = { before: [], after: [] };
  let seenSequence = false;
  for (const item of p.single as unknown[]) {
    if (isObject(item) && isObject(item.Sequence)) {
      if (item.Sequence.id !== 'A' || seenSequence)
        throw new Error(
          `${source}: "post_processor.single" must hold the sequence A once, got ${show(p.single)}`,
        );
      seenSequence = true;
    } else if (isObject(item) && isObject(item.SpecialToken)) {
      const name = item.SpecialToken.id;
      const entry = typeof name === 'string' ? specials[name] : undefined;
      const ids =
        isObject(entry) && Array.isArray(entry.ids)
          ? (entry.ids as unknown[])
          : typeof name === 'string'
            ? [added.find((a) => a.content === name)?.id ?? vocab.get(name)]
            : [undefined];
      if (!ids.every((id) => Number.isInteger(id)))
        throw new Error(`${source}: "post_processor" names the special token ${show(name)}, which has no id`);
      (seenSequence ? out.after : out.before).push(...(ids as number[]));
    } else throw new Error(`${source}: "post_processor.single" has an item ${show(item)} not understood`);
  }
  if (!seenSequence) throw new Error(`${source}: "post_processor.single" lacks the sequence A`);
  return out;
}
