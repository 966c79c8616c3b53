/**
 * A Hugging Face byte-level BPE tokenizer (`tokenizer.json`, with `tokenizer_config.json` for its named
 * tokens and chat template), encoding and decoding as the `tokenizers` library does:
 *
 *   encode: added tokens are cut out of the text first (leftmost, longest; special ones only when
 *   `allowSpecial`), each stretch between them is normalized (NFC, …), cut by the pre-tokenizer (the
 *   pattern's matches and the text between them) and its UTF-8 bytes merged by rank (a piece that is a
 *   whole vocabulary token is kept as one with `ignore_merges`); `addSpecialTokens` adds the
 *   post-processor's tokens (Llama 3's <|begin_of_text|>).
 *   decode: each token's characters back to bytes (an added token is its text), then UTF-8 with U+FFFD for
 *   broken sequences; ids without a token (a model's vocabulary padded past the tokenizer's) give nothing,
 *   as in transformers.
 *
 * It has the methods of our own Tokenizer (encode, decode, decodeBytes, decoder, tokenId, isSpecial,
 * idToToken, tokenBytes, vocabSize, specialTokens), so code written for one takes the other.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BYTE_TO_CHAR, utf8Encode } from './bytes.js';
import { type HfTokenizerSpec, type PreTokenizeStep, parseHfTokenizerJson } from './hf-json.js';
import { MergeTable } from './merge.js';
import { GPT2_PATTERN } from './pretokenize.js';
import { SpecialMatcher } from './special.js';
import { Template } from './jinja.js';
import { TokenStreamDecoder } from './tokenizer.js';

export const HF_TOKENIZER_FILE = 'tokenizer.json';
export const HF_TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';

export interface HfEncodeOptions {
  /**
   * Recognise special tokens (<|im_end|>, …) in the text (default true). With false they are encoded as
   * ordinary characters, which untrusted text should get; added tokens that are not special (Qwen's
   * <tool_call>) are recognised either way, as in transformers.
   */
  allowSpecial?: boolean;
  /** Put the post-processor's tokens around the text, as transformers' `encode` does (default false). */
  addSpecialTokens?: boolean;
}

export interface HfDecodeOptions {
  /** Leave special tokens out (default false). */
  skipSpecialTokens?: boolean;
  /**
   * transformers' clean-up of spaces before punctuation (" ." → "."), applied when tokenizer_config.json
   * asks for it (Llama 3's does) and transformers' decode is to be reproduced (default false: the text as
   * the tokens spell it).
   */
  cleanUpSpaces?: boolean;
}

/** One message of a conversation, as chat templates read it (role, content, tool_calls, …). */
export interface ChatMessage {
  role: string;
  content?: string | null;
  [key: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the opening of the assistant's turn (default false). */
  addGenerationPrompt?: boolean;
  /** Tool descriptions (JSON schemas), for templates that list them. */
  tools?: readonly unknown[];
  documents?: readonly unknown[];
  /** Further variables the template reads, e.g. Qwen3's enable_thinking. */
  variables?: Record<string, unknown>;
  /** A template to use instead of tokenizer_config.json's. */
  template?: string;
}

const CACHE_LIMIT = 1 << 17;
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((ch, b) => [ch, b]));
const GPT2_BYTE_LEVEL = new RegExp(GPT2_PATTERN);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A token name from tokenizer_config.json: a string, or an AddedToken object's content. */
function tokenName(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') return v.content;
  return null;
}

export class HfTokenizer {
  /** The tokenizer.json and tokenizer_config.json this was read from (saved back as they are). */
  readonly json: Record<string, unknown>;
  readonly config: Record<string, unknown>;
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  readonly padToken: string | null;
  /** tokenizer_config.json's chat_template, or null. */
  readonly chatTemplate: string | null;
  /** tokenizer_config.json's clean_up_tokenization_spaces (what transformers' decode does by default). */
  readonly cleanUpTokenizationSpaces: boolean;
  private readonly spec: HfTokenizerSpec;
  private readonly table: MergeTable;
  /** The vocabulary id of each byte. */
  private readonly byteIds: Int32Array;
  /** Bytes of each id (null where no token has that id). */
  private readonly bytes: (Uint8Array | null)[];
  private readonly tokens: (string | null)[];
  private readonly addedById = new Map<number, { content: string; special: boolean }>();
  private readonly addedByContent = new Map<string, { id: number; lstrip: boolean; rstrip: boolean }>();
  private readonly allAdded: SpecialMatcher;
  private readonly plainAdded: SpecialMatcher;
  private readonly cache = new Map<string, number[]>();
  private readonly templates = new Map<string, Template>();

  private constructor(json: Record<string, unknown>, config: Record<string, unknown>, source: string) {
    this.json = json;
    this.config = config;
    const spec = parseHfTokenizerJson(json, source);
    this.spec = spec;
    const vocab = spec.vocab;
    this.byteIds = Int32Array.from(BYTE_TO_CHAR, (ch) => vocab.get(ch)!);
    this.table = new MergeTable(
      spec.merges.map(([a, b]) => [vocab.get(a)!, vocab.get(b)!] as const),
      spec.merges.map(([a, b]) => vocab.get(a + b)!),
    );
    let size = 0;
    for (const id of vocab.values()) size = Math.max(size, id + 1);
    for (const a of spec.added) size = Math.max(size, a.id + 1);
    this.tokens = new Array(size).fill(null);
    this.bytes = new Array(size).fill(null);
    for (const [token, id] of vocab) {
      this.tokens[id] = token;
      this.bytes[id] = tokenToBytes(token);
    }
    for (const a of spec.added) {
      this.tokens[a.id] = a.content;
      this.bytes[a.id] = utf8Encode(a.content);
      this.addedById.set(a.id, { content: a.content, special: a.special });
      this.addedByContent.set(a.content, { id: a.id, lstrip: a.lstrip, rstrip: a.rstrip });
    }
    this.allAdded = new SpecialMatcher(spec.added.map((a) => a.content));
    this.plainAdded = new SpecialMatcher(spec.added.filter((a) => !a.special).map((a) => a.content));
    const named = (key: string) => {
      const name = tokenName(config[key]);
      if (name !== null && !vocab.has(name) && !this.addedByContent.has(name))
        throw new Error(
          `${source}: tokenizer_config.json's ${key} ${JSON.stringify(name)} is no token of it`,
        );
      return name;
    };
    this.bosToken = named('bos_token');
    this.eosToken = named('eos_token');
    this.padToken = named('pad_token');
    this.chatTemplate = typeof config.chat_template === 'string' ? config.chat_template : null;
    this.cleanUpTokenizationSpaces = config.clean_up_tokenization_spaces === true;
  }

  /** From parsed tokenizer.json (and tokenizer_config.json); errors name `source` and the field. */
  static fromJSON(json: unknown, config: unknown = {}, source = HF_TOKENIZER_FILE): HfTokenizer {
    if (!isObject(json)) throw new Error(`${source}: must hold a JSON object`);
    if (!isObject(config)) throw new Error(`${source}: tokenizer_config.json must hold a JSON object`);
    return new HfTokenizer(json, config, source);
  }

  /** Reads `dir`/tokenizer.json and, when present, `dir`/tokenizer_config.json. */
  static async load(dir: string): Promise<HfTokenizer> {
    const path = join(dir, HF_TOKENIZER_FILE);
    const read = async (file: string, optional: boolean): Promise<unknown> => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        if (optional && (err as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw new Error(`Cannot read tokenizer file ${file}: ${(err as Error).message}`, { cause: err });
      }
      try {
        return JSON.parse(text);
      } catch (err) {
        throw new Error(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
      }
    };
    const json = await read(path, false);
    const config = await read(join(dir, HF_TOKENIZER_CONFIG_FILE), true);
    return HfTokenizer.fromJSON(json, config, path);
  }

  /** The files to write beside a saved model (the ones read, unchanged). */
  files(): Record<string, string> {
    return {
      [HF_TOKENIZER_FILE]: `${JSON.stringify(this.json, null, 2)}\n`,
      [HF_TOKENIZER_CONFIG_FILE]: `${JSON.stringify(this.config, null, 2)}\n`,
    };
  }

  /** tokenizer.json as read (what a checkpoint saves to be paired with this tokenizer again). */
  toJSON(): Record<string, unknown> {
    return this.json;
  }

  /** One past the largest token id (vocabulary and added tokens). */
  get vocabSize(): number {
    return this.tokens.length;
  }

  /** The special added tokens' texts, in id order. */
  get specialTokens(): readonly string[] {
    return [...this.addedById]
      .filter(([, a]) => a.special)
      .sort(([a], [b]) => a - b)
      .map(([, a]) => a.content);
  }

  /** The id of a token by its text (an added token such as '<|im_end|>', or any vocabulary token). */
  tokenId(name: string): number {
    const id = this.addedByContent.get(name)?.id ?? this.spec.vocab.get(name);
    if (id === undefined) {
      const known = this.specialTokens.length ? `special tokens: ${this.specialTokens.join(', ')}` : 'none';
      throw new Error(`Unknown token ${JSON.stringify(name)} (${known})`);
    }
    return id;
  }

  isSpecial(id: number): boolean {
    return this.addedById.get(id)?.special === true;
  }

  /** The token's text as the vocabulary writes it ('Ġthe'), or an added token's text. */
  idToToken(id: number): string {
    this.checkId(id);
    const t = this.tokens[id];
    if (t === null) throw new Error(`Token id ${id} has no token in this tokenizer`);
    return t;
  }

  /** The bytes a token stands for (a copy). */
  tokenBytes(id: number): Uint8Array {
    this.checkId(id);
    const b = this.bytes[id];
    if (b === null) throw new Error(`Token id ${id} has no token in this tokenizer`);
    return b.slice();
  }

  encode(text: string, options: HfEncodeOptions = {}): number[] {
    const out: number[] = [];
    if (options.addSpecialTokens) out.push(...this.spec.template.before);
    const matcher = options.allowSpecial === false ? this.plainAdded : this.allAdded;
    const parts: { text: string; id: number | null; lstrip: boolean; rstrip: boolean }[] = [];
    matcher.split(
      text,
      (t) => parts.push({ text: t, id: null, lstrip: false, rstrip: false }),
      (s) => parts.push({ text: s, ...this.addedByContent.get(s)! }),
    );
    // lstrip / rstrip: an added token takes the whitespace beside it.
    parts.forEach((p, i) => {
      if (p.id === null) return;
      if (p.lstrip && parts[i - 1]?.id === null) parts[i - 1].text = parts[i - 1].text.trimEnd();
      if (p.rstrip && parts[i + 1]?.id === null) parts[i + 1].text = parts[i + 1].text.trimStart();
    });
    for (const p of parts) {
      if (p.id !== null) out.push(p.id);
      else if (p.text.length > 0) this.encodeOrdinary(p.text, out);
    }
    if (options.addSpecialTokens) out.push(...this.spec.template.after);
    return out;
  }

  encodeBatch(texts: Iterable<string>, options: HfEncodeOptions = {}): number[][] {
    return Array.from(texts, (t) => this.encode(t, options));
  }

  /** The bytes the ids stand for, concatenated (ids without a token give none). */
  decodeBytes(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): Uint8Array {
    const parts: Uint8Array[] = [];
    let total = 0;
    for (let i = 0; i < ids.length; i++) {
      this.checkId(ids[i]);
      const b = this.bytes[ids[i]];
      if (!b || (options.skipSpecialTokens && this.isSpecial(ids[i]))) continue;
      parts.push(b);
      total += b.length;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const b of parts) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }

  decode(ids: ArrayLike<number>, options: HfDecodeOptions = {}): string {
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(this.decodeBytes(ids, options));
    return options.cleanUpSpaces ? cleanUpSpaces(text) : text;
  }

  /**
   * The conversation rendered by the chat template of tokenizer_config.json, as transformers'
   * apply_chat_template(…, tokenize=False) renders it (see jinja.ts for the subset of Jinja understood; a
   * template outside it is an error naming the construct).
   */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    const source = options.template ?? this.chatTemplate;
    if (source === null)
      throw new Error(
        'applyChatTemplate: tokenizer_config.json has no chat_template (pass options.template)',
      );
    let template = this.templates.get(source);
    if (!template) {
      template = new Template(source);
      this.templates.set(source, template);
    }
    const specials: Record<string, unknown> = {};
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token'] as const) {
      const name = tokenName(this.config[key]);
      if (name !== null) specials[key] = name;
    }
    const extra = this.config.additional_special_tokens;
    if (Array.isArray(extra)) specials.additional_special_tokens = extra.map(tokenName);
    return template.render({
      ...specials,
      ...options.variables,
      messages,
      tools: options.tools ?? null,
      documents: options.documents ?? null,
      add_generation_prompt: options.addGenerationPrompt ?? false,
    });
  }

  /** The ids of the rendered conversation (special tokens recognised, nothing added around it). */
  encodeChat(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): number[] {
    return this.encode(this.applyChatTemplate(messages, options));
  }

  /** A streaming decoder: characters split across calls are held back until whole. */
  decoder(): TokenStreamDecoder {
    return new TokenStreamDecoder(this, { ignoreBOM: true });
  }

  private checkId(id: number): void {
    if (!Number.isInteger(id) || id < 0) throw new Error(`Token id ${id} is not a whole number >= 0`);
  }

  private encodeOrdinary(text: string, out: number[]): void {
    let pieces = [this.normalize(text)];
    for (const step of this.spec.preTokenize) pieces = pieces.flatMap((p) => preTokenize(p, step));
    for (const piece of pieces) {
      if (piece.length === 0) continue;
      let ids = this.cache.get(piece);
      if (ids === undefined) {
        ids = this.bpe(piece);
        if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
        this.cache.set(piece, ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  private normalize(text: string): string {
    let t = text;
    for (const form of this.spec.normalizers) t = t.normalize(form);
    return t;
  }

  private bpe(piece: string): number[] {
    const bytes = utf8Encode(piece);
    if (this.spec.ignoreMerges) {
      let chars = '';
      for (const b of bytes) chars += BYTE_TO_CHAR[b];
      const whole = this.spec.vocab.get(chars);
      if (whole !== undefined) return [whole];
    }
    return this.table.apply(Array.from(bytes, (b) => this.byteIds[b]));
  }
}

/** The bytes of a vocabulary token: its characters through GPT-2's byte map, or its UTF-8 if one is not in it. */
function tokenToBytes(token: string): Uint8Array {
  const out: number[] = [];
  for (const ch of token) {
    const b = CHAR_TO_BYTE.get(ch);
    if (b === undefined) return utf8Encode(token);
    out.push(b);
  }
  return Uint8Array.from(out);
}

/** Pieces of one piece after a pre-tokenizer step: a pattern's matches and the stretches between them. */
function preTokenize(piece: string, step: PreTokenizeStep): string[] {
  if (step.kind === 'byteLevel') {
    const text = step.addPrefixSpace && !piece.startsWith(' ') ? ` ${piece}` : piece;
    return step.useRegex ? splitIsolated(text, GPT2_BYTE_LEVEL) : [text];
  }
  return splitIsolated(piece, step.pattern);
}

function splitIsolated(text: string, pattern: RegExp): string[] {
  const re = new RegExp(pattern);
  const out: string[] = [];
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(m[0]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** transformers' clean_up_tokenization: no space before . ? ! , and English contractions. */
function cleanUpSpaces(text: string): string {
  return text
    .replaceAll(' .', '.')
    .replaceAll(' ?', '?')
    .replaceAll(' !', '!')
    .replaceAll(' ,', ',')
    .replaceAll(" ' ", "'")
    .replaceAll(" n't", "n't")
    .replaceAll(" 'm", "'m")
    .replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve")
    .replaceAll(" 're", "'re");
}
